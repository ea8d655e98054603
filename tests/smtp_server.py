"""A real SMTP server on 127.0.0.1 (aiosmtpd) that checks a login and records every message.

``smtp_server(mode=...)`` runs one: ``"starttls"`` offers STARTTLS with a
self-signed certificate (made by the ``openssl`` command), ``"ssl"`` speaks
TLS from the first byte, ``"plain"`` offers no TLS at all (and then allows
AUTH in clear, as a badly configured server would). ``defer(n)`` answers the
next n messages with a 451, ``reject()`` the next one with a 554,
``defer_recipients(n)`` the next n ``RCPT TO`` with a 451 (before any DATA).

``drip_server(interval)`` is a hostile one: it sends its greeting one byte
every ``interval`` seconds, forever.
``hold()`` records the next message and then leaves it unanswered (``held``
is set) until the server stops, so a test can kill the sender at that step.
``drop()`` records the next message and then closes the connection without
answering it: the sender cannot know whether the message was taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

USER = "herald@example.com"
PASSWORD = "pw-Zq7!x9Vr-smtp"
Mode = Literal["starttls", "ssl", "plain"]


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert, key)."""
    openssl = shutil.which("openssl")
    assert openssl, "the tests need the openssl command to make a certificate"
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def client_context(cert: Path) -> ssl.SSLContext:
    """What a client needs to trust the test server (and nothing else)."""
    return ssl.create_default_context(cafile=str(cert))


@dataclass
class Received:
    sender: str
    recipients: list[str]
    data: bytes
    tls: bool
    user: str | None

    @property
    def message(self) -> EmailMessage:
        parsed = email.message_from_bytes(self.data, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        return parsed


@dataclass
class SMTPServer:
    mode: Mode
    port: int = 0
    received: list[Received] = field(default_factory=list)
    logins: list[tuple[str, bool]] = field(default_factory=list)
    """(username, accepted) of every AUTH attempt."""
    answers: list[str] = field(default_factory=list)
    recipient_answers: list[str] = field(default_factory=list)
    holding: bool = False
    dropping: bool = False
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def hold(self) -> None:
        """Record the next message, then never answer it (until the server stops)."""
        self.holding = True

    def drop(self) -> None:
        """Record the next message, then close the connection instead of answering."""
        self.dropping = True

    def defer(self, count: int = 1) -> None:
        self.answers.extend(["451 4.3.0 try again later"] * count)

    def reject(self) -> None:
        self.answers.append("554 5.7.1 message refused by policy")

    def defer_recipients(self, count: int) -> None:
        self.recipient_answers.extend(["451 4.3.0 mailbox busy, try again later"] * count)

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if self.recipient_answers:
            return self.recipient_answers.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.answers:
            return self.answers.pop(0)
        data = envelope.original_content or b""
        user = str(session.auth_data) if session.authenticated else None
        tls = server.transport.get_extra_info("ssl_object") is not None
        self.received.append(
            Received(str(envelope.mail_from), list(envelope.rcpt_tos), data, tls, user)
        )
        if self.dropping:
            self.dropping = False
            server.transport.abort()
            return "250 2.0.0 OK queued (never heard: the connection is gone)"
        if self.holding:
            self.holding = False
            self.held.set()
            while not self.release.is_set():
                await asyncio.sleep(0.05)
        return "250 2.0.0 OK queued"

    def authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        ok = (
            isinstance(data, LoginPassword)
            and data.login.decode() == USER
            and data.password.decode() == PASSWORD
        )
        who = data.login.decode() if isinstance(data, LoginPassword) else ""
        self.logins.append((who, ok))
        return AuthResult(success=ok, auth_data=who if ok else None, handled=False)


class _Controller(Controller):
    """Binds port 0 and learns the real port before aiosmtpd's own first connection."""

    def _trigger_server(self) -> None:
        assert self.server is not None
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


@contextmanager
def smtp_server(mode: Mode, cert: Path, key: Path) -> Iterator[SMTPServer]:
    """A running server in ``mode`` on 127.0.0.1 (port in ``.port``)."""
    recorder = SMTPServer(mode)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(str(cert), str(key))
    controller = _Controller(
        recorder,
        hostname="127.0.0.1",
        port=0,
        ssl_context=tls if mode == "ssl" else None,
        tls_context=tls if mode == "starttls" else None,
        authenticator=recorder.authenticate,
        auth_require_tls=mode == "starttls",  # "ssl" is TLS already; "plain" allows clear
        server_hostname="smtp.test",
    )
    controller.start()
    recorder.port = controller.port
    try:
        yield recorder
    finally:
        recorder.release.set()
        controller.stop()


@contextmanager
def drip_server(interval: float) -> Iterator[int]:
    """A server on 127.0.0.1 that greets one byte every ``interval`` s; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            while not stop.is_set():
                for byte in b"220 slow.example ESMTP\r\n"[:-2]:
                    conn.sendall(bytes([byte]))
                    time.sleep(interval)

    def accept() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set():
                conn, _ = listener.accept()
                threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()
