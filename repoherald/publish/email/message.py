"""Build the report e-mail: one ``multipart/alternative`` message for one or several reports.

The plain part is the Markdown report itself (it reads well as text); the
HTML part is the same report rendered by :mod:`repoherald.publish.email.html`.
The message uses :data:`email.policy.SMTP`, which encodes a UTF-8 subject
(RFC 2047) and UTF-8 bodies, and uses CRLF line ends as SMTP wants.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid, parseaddr

from repoherald.config.templates import template_fields
from repoherald.errors import PublishError
from repoherald.i18n import t
from repoherald.publish.base import Publication
from repoherald.publish.email.html import anchor_prefix, render_document, render_fragment
from repoherald.render import twin
from repoherald.render.digest import Digest, digest_from_twin

SUBJECT_FIELDS = frozenset({"name", "date", "lang", "high", "total"})
MAX_SUBJECT = 250
"""Characters; a subject built from many repository names is cut here."""


def subject_fields(template: str) -> set[str]:
    """The fields ``template`` uses; ValueError for a malformed one or an unknown field."""
    return set(template_fields(template, sorted(SUBJECT_FIELDS), "the subject"))


@dataclass(frozen=True, slots=True)
class Envelope:
    """Who a message is from and to (validated addresses)."""

    sender: str
    to: tuple[str, ...]
    cc: tuple[str, ...] = ()

    @property
    def recipients(self) -> list[str]:
        """Bare addresses for ``RCPT TO``: every To and Cc."""
        return [parseaddr(a)[1] for a in (*self.to, *self.cc)]

    @property
    def sender_address(self) -> str:
        return parseaddr(self.sender)[1]


def _digest(item: Publication) -> Digest:
    """The digest of a report (or a weekly roll-up), from its JSON twin."""
    try:
        return digest_from_twin(twin.read(item.json), item.name)
    except twin.TwinError as e:
        raise PublishError(f"{item.name} {item.day}: {e}") from None


def subject(template: str | None, items: Sequence[Publication]) -> str:
    """The subject for ``items``: one report, or the digest of several (names joined)."""
    first = items[0]
    names = list(dict.fromkeys(i.name for i in items))
    digests = [_digest(i) for i in items]
    days = sorted({d.week_start or d.day for d in digests} | {i.day for i in items})
    when = days[0].isoformat() if len(days) == 1 else f"{days[0]} – {days[-1]}"
    fields = {
        "name": ", ".join(names),
        "date": when,
        "lang": first.lang,
        "high": sum(d.counts.get("high", 0) for d in digests),
        "total": sum(d.total for d in digests),
    }
    weekly = all(d.week_start is not None for d in digests)
    default = t(first.lang, "email.subject_week" if weekly else "email.subject")
    text = (template or default).format(**fields)
    text = " ".join(text.split())  # a header is one line
    return text if len(text) <= MAX_SUBJECT else text[: MAX_SUBJECT - 1] + "…"


def _html(title: str, items: Sequence[Publication]) -> str:
    if len(items) == 1:
        return render_document(title, [render_fragment(items[0].markdown)])
    index = ['<ul style="margin:8px 0 16px">']
    parts = []
    for item in items:
        prefix = anchor_prefix(item.name, item.day.isoformat())
        label = html.escape(f"{item.name} · {item.day.isoformat()}")
        index.append(f'<li><a href="#{prefix}top" style="color:#0969da">{label}</a></li>')
        body = render_fragment(item.markdown, prefix)
        parts.append(f'<div id="{prefix}top">\n{body}</div>\n')
    index.append("</ul>\n")
    return render_document(title, ["\n".join(index), *parts])


def _text(items: Sequence[Publication]) -> str:
    return "\n\n---\n\n".join(i.markdown.rstrip("\n") for i in items) + "\n"


def build_message(
    envelope: Envelope, template: str | None, items: Sequence[Publication], now: datetime
) -> EmailMessage:
    """The message for ``items`` (one report, or a digest of several), with a fresh Message-ID."""
    if not items:
        raise ValueError("build_message needs at least one publication")
    title = subject(template, items)
    msg = EmailMessage(policy=policy.SMTP)
    msg["Subject"] = title
    msg["From"] = envelope.sender
    msg["To"] = ", ".join(envelope.to)
    if envelope.cc:
        msg["Cc"] = ", ".join(envelope.cc)
    msg["Date"] = format_datetime(now)
    domain = envelope.sender_address.rpartition("@")[2] or None
    msg["Message-ID"] = make_msgid("repoherald", domain=domain)
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(_text(items), subtype="plain", charset="utf-8")
    msg.add_alternative(_html(title, items), subtype="html", charset="utf-8")
    return msg
