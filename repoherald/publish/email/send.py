"""Hand one message to an SMTP server, retrying what may pass later and nothing else.

``starttls`` means encrypted or not at all: a server that does not offer
STARTTLS is an error, never a reason to send the password and the report in
clear. What may pass later (a refused or reset connection, a timeout, a
``4xx`` reply) is retried with backoff; a ``5xx`` reply — a refused login
above all — fails at once, since repeating a wrong password only gets the
account locked; and one password is tried once per conversation, not once per
mechanism the server lists (``smtplib``'s ``login`` tries PLAIN, then LOGIN, with
the same wrong password: two failures counted against the account per send).

Once the end-of-data marker (the final ``.``) has gone out, the server may
have queued the message: a failure without its answer (a timeout, a dropped
connection, the deadline) is :class:`~repoherald.errors.MaybeSentError`,
never retried, and the ledger records "may have been sent". Before that
marker, a failure is retried as above: RFC 5321 (4.1.1.4) has a server discard
a message whose marker never arrived, so the retry cannot mail it twice.

The whole conversation of one attempt (connect, TLS, login, DATA) has a
deadline (``Server.deadline``): a timeout bounds each read, and a server
that answers one byte every few seconds would pass every one of them, so a
watchdog shuts the socket when the deadline passes.

Every error names the server (``email smtp.example.com:587``) and says what
to do; the password is read through :func:`~repoherald.redact.secret_env`
by the caller, so :func:`~repoherald.redact.redact` masks it in any server
reply that echoes it.
"""

from __future__ import annotations

import contextlib
import smtplib
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from repoherald.errors import MaybeSentError, PublishError
from repoherald.httppolicy import SMTP_DEADLINE
from repoherald.redact import redact

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

Security = Literal["starttls", "ssl", "none"]


@dataclass(frozen=True)
class Server:
    """Where and how to connect."""

    host: str
    port: int
    security: Security
    timeout: float
    context: ssl.SSLContext | None = None
    """TLS settings (tests pass one that trusts their self-signed certificate)."""
    deadline: float | None = None
    """Seconds for one attempt's whole conversation (None: :attr:`time_limit`'s default)."""

    @property
    def time_limit(self) -> float:
        """The conversation's deadline: ``deadline``, else the larger of the default and
        four operations' timeouts (a slow server's every step may take ``timeout``)."""
        return self.deadline if self.deadline is not None else max(SMTP_DEADLINE, 4 * self.timeout)

    @property
    def label(self) -> str:
        return f"email {self.host}:{self.port}"


@dataclass(frozen=True)
class Login:
    """Credentials and the names of the variables they came from (for messages)."""

    username: str
    password: str
    username_env: str
    password_env: str


class _Transient(Exception):
    """A failure worth another attempt; its text is the reason."""


class _Watchdog:
    """Shuts the conversation's socket once its deadline passes, waking a blocked read."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self.expired:
                _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            if self._sock is not None:
                _shut(self._sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


END_OF_DATA = b"\r\n.\r\n"
"""How ``smtplib`` ends the message it sends after ``DATA``: the server may take it from here."""
MECHANISM_REFUSED = frozenset({504, 534})
"""AUTH answers about the mechanism, not the password: "not supported", "too weak"."""


class _SMTP(smtplib.SMTP):
    """``smtplib.SMTP`` that hands its raw socket to a watchdog as soon as it exists,
    notes when the message has gone out, and tries the password once."""

    message_out = False
    """True once the end-of-data marker was handed to the socket."""

    def __init__(self, watchdog: _Watchdog, *args: Any, **kwargs: Any) -> None:
        self.watchdog = watchdog
        super().__init__(*args, **kwargs)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        sock: socket.socket = super()._get_socket(host, port, timeout)  # type: ignore[misc]
        self.watchdog.watch(sock)
        return sock

    def send(self, s: ReadableBuffer | str) -> None:
        super().send(s)
        if isinstance(s, bytes) and s.endswith(END_OF_DATA):
            self.message_out = True

    def login(
        self, user: str, password: str, *, initial_response_ok: bool = True
    ) -> tuple[int, bytes]:
        """Log in with the first mechanism both sides know; the next one only when the
        server refuses the mechanism itself (504, 534), never after a refused password."""
        self.ehlo_or_helo_if_needed()
        if not self.has_extn("auth"):
            raise smtplib.SMTPNotSupportedError("SMTP AUTH extension not supported by server.")
        offered = self.esmtp_features["auth"].upper().split()
        usable = [m for m in ("CRAM-MD5", "PLAIN", "LOGIN") if m in offered]
        if not usable:
            raise smtplib.SMTPException("No suitable authentication method found.")
        self.user, self.password = user, password
        for mechanism in usable:
            answer = getattr(self, "auth_" + mechanism.lower().replace("-", "_"))
            try:
                return self.auth(mechanism, answer, initial_response_ok=initial_response_ok)
            except smtplib.SMTPAuthenticationError as exc:
                if exc.smtp_code not in MECHANISM_REFUSED or mechanism == usable[-1]:
                    raise
        raise AssertionError("unreachable: the last mechanism returns or raises")


class _SMTP_SSL(smtplib.SMTP_SSL, _SMTP):
    """``SMTP_SSL`` whose raw socket is watched before the TLS handshake starts."""

    def __init__(self, watchdog: _Watchdog, *args: Any, **kwargs: Any) -> None:
        self.watchdog = watchdog
        smtplib.SMTP_SSL.__init__(self, *args, **kwargs)


def send(
    server: Server,
    message: EmailMessage,
    sender: str,
    recipients: list[str],
    login: Login | None,
    *,
    max_retries: int,
    retry_delay: float,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, tuple[int, bytes]]:
    """Send ``message``; return the recipients the server refused (others got it)."""
    problem = ""
    for attempt in range(max_retries + 1):
        try:
            with _Watchdog(server.time_limit) as watchdog:
                try:
                    return _attempt(server, message, sender, recipients, login, watchdog)
                except MaybeSentError:
                    raise  # the server may have the message: never sent twice
                except (PublishError, _Transient):
                    if watchdog.expired:
                        raise _Transient(_late(server)) from None
                    raise
        except _Transient as exc:
            problem = str(exc)
        if attempt < max_retries:
            sleep(retry_delay * (2**attempt))
    raise PublishError(
        redact(f"{server.label}: {problem} after {max_retries + 1} attempt(s): try again later")
    )


def _attempt(
    server: Server,
    message: EmailMessage,
    sender: str,
    recipients: list[str],
    login: Login | None,
    watchdog: _Watchdog,
) -> dict[str, tuple[int, bytes]]:
    context = server.context or ssl.create_default_context()
    try:
        smtp = _connect(server, context, watchdog)
    except (smtplib.SMTPResponseException, ssl.SSLError, OSError) as exc:
        _raise(server, exc, login)
    try:
        if server.security == "starttls":
            smtp.ehlo()
            if not smtp.has_extn("starttls"):
                raise PublishError(
                    f"{server.label}: the server does not offer STARTTLS, and nothing is sent"
                    ' in clear: set security = "ssl" (port 465) if it speaks TLS from the'
                    ' start, or security = "none" only for a server on a trusted network'
                )
            smtp.starttls(context=context)
            smtp.ehlo()
        if login is not None:
            smtp.login(login.username, login.password)
        return smtp.send_message(message, sender, recipients)
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        if codes and all(400 <= c < 500 for c in codes):
            raise _Transient(f"every recipient was deferred ({codes[0]})") from None
        who = ", ".join(sorted(exc.recipients))
        raise PublishError(
            redact(f"{server.label}: the server refused every recipient ({who}): check `to`/`cc`")
        ) from None
    except (smtplib.SMTPException, ssl.SSLError, OSError) as exc:
        if smtp.message_out and not isinstance(exc, smtplib.SMTPResponseException):
            raise _unanswered(server, exc, watchdog) from None
        _raise(server, exc, login)
    finally:
        _close(smtp)


def _unanswered(server: Server, exc: BaseException, watchdog: _Watchdog) -> MaybeSentError:
    """The message went out and no answer came back: the server may have queued it."""
    if watchdog.expired:
        why = _late(server)
    elif isinstance(exc, TimeoutError) or "timed out" in str(exc):
        why = "timed out"
    else:
        why = "the server closed the connection"
    return MaybeSentError(
        f"{server.label}: the message went out but the server's answer did not come back"
        f" ({why}); look in a recipient's mailbox before sending it again"
    )


def _late(server: Server) -> str:
    return f"the conversation took longer than {server.time_limit:g} s, the deadline"


def _connect(server: Server, context: ssl.SSLContext, watchdog: _Watchdog) -> _SMTP:
    if server.security == "ssl":
        return _SMTP_SSL(
            watchdog, server.host, server.port, timeout=server.timeout, context=context
        )
    return _SMTP(watchdog, server.host, server.port, timeout=server.timeout)


def _close(smtp: smtplib.SMTP) -> None:
    """QUIT politely; the message is already accepted, so a failure here changes nothing."""
    try:
        smtp.quit()
    except (smtplib.SMTPException, OSError):
        smtp.close()


def _reply(exc: smtplib.SMTPResponseException) -> str:
    text = exc.smtp_error
    said = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return f"{exc.smtp_code} {' '.join(said.split())[:160]}".strip()


def _raise(server: Server, exc: BaseException, login: Login | None) -> NoReturn:
    """Turn ``exc`` into a one-line :class:`PublishError`, or a :class:`_Transient` to retry."""
    where = server.label
    if isinstance(exc, smtplib.SMTPAuthenticationError) and exc.smtp_code >= 500:
        names = f"${login.password_env} and the username in ${login.username_env}" if login else ""
        raise PublishError(
            redact(f"{where}: the server refused the login ({_reply(exc)}): check {names}")
        ) from None
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        said = str(exc).rstrip(".")
        raise PublishError(redact(f"{where}: {said}: check `security` and the server")) from None
    if isinstance(exc, smtplib.SMTPResponseException):
        if 400 <= exc.smtp_code < 500:
            raise _Transient(f"the server answered {_reply(exc)}") from None
        raise PublishError(
            redact(
                f"{where}: the server refused the message ({_reply(exc)}): check `from`,"
                " the recipients and the account's sending rights"
            )
        ) from None
    if isinstance(exc, ssl.SSLCertVerificationError):
        raise PublishError(
            f"{where}: the server's TLS certificate is not trusted ({exc.verify_message}):"
            " check `host` is the name on the certificate"
        ) from None
    if isinstance(exc, ssl.SSLError):
        raise PublishError(
            f"{where}: TLS failed ({exc.reason}): check `security` and `port`"
            ' (465 is "ssl", 587 is "starttls")'
        ) from None
    if isinstance(exc, TimeoutError):
        raise _Transient("timed out") from None
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        raise _Transient("the server closed the connection") from None
    if isinstance(exc, smtplib.SMTPException):
        raise PublishError(redact(f"{where}: {exc}: check the server's settings")) from None
    raise _Transient(f"connection failed ({type(exc).__name__})") from None
