"""The ``Publisher`` protocol: where a finished repository-day goes (archive, issue, chat, mail).

A publisher is one class in one module. It names its config ``type``, brings
an ``Options`` pydantic model that validates its ``[[publish]]`` table
(unknown keys are errors, not silently ignored), says which environment
variables it needs — by *name*: secrets never live in the configuration —
and turns a :class:`Publication` into a :class:`Delivery`. Built-in
publishers are declared under the ``repoherald.publishers`` entry-point
group exactly as a third-party one is (:mod:`repoherald.publish.registry`).

A publisher class may set ``edits_in_place: ClassVar[bool] = True`` (the
GitHub issue): a day whose report changed after it was sent is then
delivered again without ``--force``, with :attr:`Publication.sent_as`
naming what to edit. A chat message cannot be edited, so by default a
changed day waits for ``--force``.

A publisher may also say what it would do for ``--dry-run``, with
``describe(items) -> (what, size in bytes)`` and no token or network write
(:mod:`repoherald.publish.dry_run`); without it the size of what would be
sent is said.

``publish`` raises :class:`~repoherald.errors.PublishError` when it cannot
deliver (:class:`~repoherald.errors.MaybeSentError` when the message went
out and no answer says whether it arrived: never retried blind);
:func:`deliver` turns that into a failed :class:`Delivery`, so a loop over
many targets can record the failure and carry on with the others.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from repoherald.errors import MaybeSentError, PublishError
from repoherald.models import DayReport
from repoherald.redact import redact, strip_userinfo
from repoherald.render.content_hash import content_hash


class PublisherOptions(BaseModel):
    """Base of every publisher's options: frozen, and unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Publication:
    """One rendered repository-day, ready to deliver.

    Both texts are rendered before any publisher runs, so a publisher that
    writes both (the archive) never has to render between its two writes.
    """

    name: str
    """The repository's report name (its archive folder, e.g. ``vllm``)."""
    identity: str
    """A stable id of what was read (a clone URL without credentials, or a resolved
    path; the identities of a combined report joined by :func:`join_identities`).
    Two repositories with the same name have different identities."""
    day: date
    lang: str
    markdown: str
    json: str
    report: DayReport | None = None
    """The analysed report; None when republished from the archive's files (``publish``)."""
    location: str | None = None
    """Where the report's ``.md`` lies, for a reader: inside the archive
    (``reports/2026/vllm/2026-08-20.md``), never an absolute path; None when not
    written yet. Chat digests name it when no ``report_url`` is configured."""
    sent_as: str | None = None
    """The remote id the ledger recorded for this target's last delivery of this day (an
    issue), set only for a publisher whose class has ``edits_in_place = True``."""

    def content_hash(self) -> str:
        """What the report says, ignoring when it was generated
        (:mod:`repoherald.render.content_hash`)."""
        return content_hash(self.markdown, self.json)


class Status(StrEnum):
    """What became of a publication at one target."""

    SENT = "sent"
    UNCHANGED = "unchanged"
    """Delivered before with the same content hash."""
    FAILED = "failed"


@dataclass(frozen=True)
class Delivery:
    """What a publisher did with one publication."""

    status: Status
    remote_id: str | None = None
    """Where it went: the report's path in the archive, an issue number, a message id."""
    content_hash: str = ""
    message: str = ""
    """One line for the run summary (redacted)."""
    paths: tuple[Path, ...] = ()
    """Local files written, if any (the archive's ``.md`` and ``.json``)."""
    maybe_sent: bool = False
    """A failure after the message went out: it may have arrived (:class:`MaybeSentError`)."""


@runtime_checkable
class Publisher(Protocol):
    """Delivers publications to one configured target (one ``[[publish]]`` table)."""

    type: ClassVar[str]
    """The ``type`` value of its ``[[publish]]`` tables, e.g. ``archive``."""
    Options: ClassVar[builtins.type[PublisherOptions]]
    """Validates the table (without the keys every target shares: ``type``, ``repos``)."""

    def __init__(self, options: Any) -> None:
        """Take validated options; no network or file access here."""
        ...

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        """Names (never values) of the environment variables these options need."""
        ...

    def publish(self, item: Publication) -> Delivery:
        """Deliver ``item``; raise :class:`PublishError` with one line when it cannot."""
        ...


@runtime_checkable
class BatchPublisher(Publisher, Protocol):
    """A publisher that can send several publications as one message (an e-mail digest).

    When ``batched`` is true, :mod:`repoherald.publish.deliver` holds its
    publications back until every repository of the run is done and calls
    :meth:`publish_batch` once; the ledger still has one row per repository-day.
    """

    @property
    def batched(self) -> bool:
        """True when this target's configuration asks for one message per run."""
        ...

    def publish_batch(self, items: Sequence[Publication]) -> Delivery:
        """Deliver ``items`` together; raise :class:`PublishError` with one line when it cannot."""
        ...


def is_batched(publisher: Publisher) -> bool:
    """True for a :class:`BatchPublisher` configured to send one message per run."""
    return isinstance(publisher, BatchPublisher) and publisher.batched


def deliver_batch(publisher: BatchPublisher, items: Sequence[Publication]) -> Delivery:
    """``publisher.publish_batch(items)``, with a delivery failure returned rather than raised."""
    try:
        return publisher.publish_batch(items)
    except PublishError as exc:
        maybe = isinstance(exc, MaybeSentError)
        return Delivery(Status.FAILED, message=redact(str(exc)), maybe_sent=maybe)


def deliver(publisher: Publisher, item: Publication) -> Delivery:
    """``publisher.publish(item)``, with a delivery failure returned rather than raised."""
    try:
        return publisher.publish(item)
    except PublishError as exc:
        maybe = isinstance(exc, MaybeSentError)
        text = redact(str(exc))
        return Delivery(
            Status.FAILED, content_hash=item.content_hash(), message=text, maybe_sent=maybe
        )


IDENTITY_SEPARATOR = " + "


def source_identity(raw: str) -> str:
    """The identity recorded for a source: credentials removed, no trailing ``/`` or ``.git``."""
    text = redact(strip_userinfo(raw.strip()))
    text = re.sub(r"^([\w.-]+)@(?=[\w.-]+:)", "", text)  # scp form: git@host:path
    text = text.rstrip("/")
    return text[:-4] if text.endswith(".git") and len(text) > 4 else text


def join_identities(identities: list[str]) -> str:
    """The identity of a report that combines several repositories, in section order."""
    return IDENTITY_SEPARATOR.join(identities)


def same_identity(a: str, b: str) -> bool:
    """True when two recorded identities name the same source (or the same set of them).

    The scheme, credentials, host case, a trailing ``.git`` or ``/`` do not
    count, so ``https://github.com/o/n.git`` and ``ssh://github.com/o/n``
    are one repository.
    """
    return _identity_key(a) == _identity_key(b)


def _identity_key(identity: str) -> list[str]:
    keys = []
    for one in identity.split(IDENTITY_SEPARATOR):
        text = source_identity(one)
        m = re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://([^/]*)(.*)$", text) or re.match(
            r"^([\w.-]+):(?!//)(.+)$", text
        )
        if m and not re.match(r"^[a-zA-Z]:[\\/]", text):  # not a Windows drive letter
            host, path = m.group(1).lower(), m.group(2).strip("/")
            text = f"{host}/{path}"
        keys.append(text)
    return sorted(keys)
