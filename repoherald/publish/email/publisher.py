"""The ``email`` publisher: the full report as an e-mail (plain Markdown and styled HTML).

One mail per repository-day, or with ``digest = true`` one mail for every
repository-day a run delivers to this target: :mod:`repoherald.publish.deliver`
holds those back in a :class:`~repoherald.publish.deliver.Batch` and calls
:meth:`EmailPublisher.publish_batch` once at the end, and the ledger records
each repository-day with the same Message-ID.

The SMTP password lives in an environment variable named by
``password_env``; it is read with :func:`~repoherald.redact.secret_env`, so
it is masked everywhere, and errors name the server and the variable only.
"""

from __future__ import annotations

import builtins
import os
import ssl
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from repoherald.emails import is_address
from repoherald.errors import PublishError
from repoherald.publish.base import Delivery, Publication, PublisherOptions, Status
from repoherald.publish.email.message import Envelope, build_message, subject_fields
from repoherald.publish.email.send import Login, Security, Server, send
from repoherald.redact import secret_env

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
DEFAULT_PORTS: dict[str, int] = {"starttls": 587, "ssl": 465, "none": 25}


class EmailOptions(PublisherOptions):
    """One ``[[publish]]`` table with ``type = "email"``."""

    host: str = Field(
        pattern=r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$",
        description="SMTP server name.",
    )
    port: int | None = Field(
        default=None, ge=1, le=65535, description="Default: 587 starttls, 465 ssl, 25 none."
    )
    security: Security = Field(
        default="starttls",
        description='"starttls" (required, never falls back to clear), "ssl" or "none".',
    )
    username_env: str | None = Field(
        default=None, pattern=ENV_NAME, description="NAME of the env variable with the login."
    )
    password_env: str | None = Field(
        default=None, pattern=ENV_NAME, description="NAME of the env variable with the password."
    )
    sender: str = Field(alias="from", description='Sender: "a@b.org" or "Name <a@b.org>".')
    to: list[str] = Field(min_length=1, description="Recipients (at least one).")
    cc: list[str] = Field(default_factory=list, description="Copy recipients.")
    subject: str | None = Field(
        default=None,
        max_length=200,
        description="Template: {name} {date} {lang} {high} {total}. Default: per language.",
    )
    digest: bool = Field(
        default=False, description="One mail for all repositories of a run, not one per day."
    )
    timeout: float = Field(default=30.0, gt=0, le=300, description="Seconds per SMTP operation.")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries of transient errors.")
    retry_delay: float = Field(
        default=2.0, ge=0, le=60, description="First backoff in seconds (doubles each retry)."
    )

    @field_validator("sender")
    @classmethod
    def _sender(cls, value: str) -> str:
        if not is_address(value):
            raise ValueError(f"{value!r} is not an e-mail address")
        return value.strip()

    @field_validator("to", "cc")
    @classmethod
    def _recipients(cls, value: list[str]) -> list[str]:
        for one in value:
            if not is_address(one):
                raise ValueError(f"{one!r} is not an e-mail address")
        return [one.strip() for one in value]

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str | None) -> str | None:
        if value is not None:
            if "\n" in value or "\r" in value:
                raise ValueError("the subject must be one line")
            subject_fields(value)
        return value

    @model_validator(mode="after")
    def _login_pair(self) -> EmailOptions:
        if (self.username_env is None) != (self.password_env is None):
            raise ValueError("set both username_env and password_env, or neither")
        return self

    @property
    def effective_port(self) -> int:
        return self.port or DEFAULT_PORTS[self.security]


class EmailPublisher:
    """Sends the full report of each repository-day (or a digest of all) by SMTP."""

    type: ClassVar[str] = "email"
    Options: ClassVar[builtins.type[PublisherOptions]] = EmailOptions

    def __init__(
        self,
        options: EmailOptions,
        ssl_context: ssl.SSLContext | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.options = options
        self.ssl_context = ssl_context
        self._sleep = sleep

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        o: EmailOptions = options
        return tuple(n for n in (o.username_env, o.password_env) if n)

    @property
    def batched(self) -> bool:
        """True when deliveries are held back and sent as one digest mail."""
        return self.options.digest

    @property
    def server(self) -> Server:
        o = self.options
        return Server(o.host, o.effective_port, o.security, o.timeout, self.ssl_context)

    @property
    def label(self) -> str:
        """How errors name this target: the server, never the account."""
        return self.server.label

    def _envelope(self) -> Envelope:
        o = self.options
        return Envelope(o.sender, tuple(o.to), tuple(o.cc))

    def describe(self, items: Sequence[Publication]) -> tuple[str, int]:
        """What :meth:`publish_batch` would do (``--dry-run``): one mail, its recipients, size."""
        o = self.options
        what = "one message" + (f" for {len(items)} report(s)" if len(items) > 1 else "")
        who = f"{len(o.to) + len(o.cc)} recipient(s)"
        return f"would send {what} to {who} via {self.label}", len(self.message_bytes(items))

    def message_bytes(self, items: Sequence[Publication]) -> bytes:
        now = datetime.now(UTC)
        return build_message(self._envelope(), self.options.subject, items, now).as_bytes()

    def publish(self, item: Publication) -> Delivery:
        return self.publish_batch([item])

    def publish_batch(self, items: Sequence[Publication]) -> Delivery:
        """Send ``items`` as one mail; the Delivery's remote id is its Message-ID."""
        o = self.options
        login = self._login()
        envelope = self._envelope()
        message = build_message(envelope, o.subject, items, datetime.now(UTC))
        refused = send(
            self.server,
            message,
            envelope.sender_address,
            envelope.recipients,
            login,
            max_retries=o.max_retries,
            retry_delay=o.retry_delay,
            sleep=self._sleep,
        )
        note = f"{self.label}: sent to {len(envelope.recipients) - len(refused)} recipient(s)"
        if refused:
            note += f"; refused: {', '.join(sorted(refused))}"
        hashes = items[0].content_hash() if len(items) == 1 else ""
        return Delivery(Status.SENT, str(message["Message-ID"]), hashes, note)

    def _login(self) -> Login | None:
        o = self.options
        if o.username_env is None or o.password_env is None:
            return None
        password = secret_env(o.password_env)
        username = os.environ.get(o.username_env)
        if not password or not username:
            missing = o.password_env if not password else o.username_env
            raise PublishError(f"{self.label}: ${missing} is not set: export it")
        return Login(username, password, o.username_env, o.password_env)
