"""The chat digest: the short form of a repository-day that fits in a group message.

A chat group is not the place for the whole report. The digest says which
day, how many commits by importance, one line and a link for each 🔴 item,
the 🟡 count, and where the full report is. Platforms cap a message (in
bytes or characters), so :func:`render_digest` drops whole 🔴 items from
the end and says how many were left out: a line is never cut mid-character
or mid-link.

The digest is built from the JSON twin (:func:`digest_from_twin`), so
``repoherald publish`` can send days read back from the archive, or from a
:class:`~repoherald.render.view.ReportView` (:func:`digest_from_view`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from repoherald.i18n import CATALOGUES, EMOJI, t
from repoherald.models import Importance
from repoherald.render import escape
from repoherald.render.twin import Twin, TwinRepo
from repoherald.render.view import ReportView

Style = Literal["markdown", "slack"]
Unit = Literal["bytes", "chars"]
TITLE_MAX = 160
"""A 🔴 line's title is shortened (at a character boundary) beyond this many characters."""
URL_MAX = 2000
"""A longer link is shown as plain text: one 🔴 line must stay far below a Slack section's 3,000."""
_SAFE_URL = re.compile(r"^https?://[^\s<>()\[\]`\"'|]+$")


@dataclass(frozen=True, slots=True)
class DigestItem:
    """One commit the digest names: a 🔴 one, or one that breaks the reader's code."""

    title: str
    url: str | None
    reason: str = ""
    """The analysis's first reason, in the report's language: why it is listed."""
    breaks: bool = False
    """It breaks the reader's configured downstream code (marked ⚠️, listed first)."""
    importance: str = Importance.HIGH.value
    day: date | None = None
    """The report day it is from: shown in a weekly roll-up."""


@dataclass(frozen=True, slots=True)
class Digest:
    """What a chat message says about one repository-day (language-neutral data)."""

    name: str
    day: date
    lang: str
    counts: dict[str, int]
    """Commits by importance value (``high``, ``medium``, ``low``)."""
    high: tuple[DigestItem, ...]
    """The commits that break the reader's code first, then the other 🔴 ones."""
    report_url: str | None = None
    location: str | None = None
    """Where the report lies in the archive: said when there is no ``report_url`` to link."""
    breaks: int = 0
    """How many commits break the reader's configured downstream code."""
    stale: tuple[str, str] | None = None
    """(branch, date of its newest commit) when the local clone looks stale."""
    week_start: date | None = None
    """Set for a weekly roll-up: its first day (``day`` is its last)."""
    days_reported: int = 1
    """Of a weekly roll-up: how many of its 7 days have a report."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _breaking_shas(repo: TwinRepo) -> set[str]:
    """Commits with an impact of kind ``breaks`` on a downstream project of ``repo``."""
    projects = repo.downstream.projects if repo.downstream else []
    return {i.sha for p in projects for i in p.impacts if i.kind == "breaks" and i.sha}


def digest_from_twin(
    data: Twin, name: str, url: str | None = None, location: str | None = None
) -> Digest:
    """A digest from a read JSON twin (:mod:`repoherald.render.twin`), or a weekly roll-up's
    (:mod:`repoherald.publish.rollup`: the week's sections, ``week_start`` set)."""
    counts = {imp.value: 0 for imp in Importance}
    breaking: list[DigestItem] = []
    high: list[DigestItem] = []
    stale: tuple[str, str] | None = None
    lang = data.lang
    for repo in data.repos:
        broken = _breaking_shas(repo)
        if repo.stale_since:
            stale = (repo.branch or "", repo.stale_since)
        for commit in repo.commits:
            importance = commit.analysis.importance if commit.analysis else Importance.LOW.value
            counts[importance] = counts.get(importance, 0) + 1
            breaks = commit.sha in broken
            if not breaks and importance != Importance.HIGH.value:
                continue
            reasons = commit.analysis.reasons if commit.analysis else []
            item = DigestItem(
                commit.title,
                commit.pr_url or commit.url,
                why_listed([str(r) for r in reasons], lang),
                breaks,
                importance,
                commit.report_date,
            )
            (breaking if breaks else high).append(item)
    return Digest(
        name,
        data.date,
        lang,
        counts,
        (*breaking, *high),
        url,
        location,
        breaks=len(breaking),
        stale=stale,
        week_start=data.week_start,
        days_reported=data.days_reported,
    )


def digest_from_view(
    view: ReportView, name: str, url: str | None = None, location: str | None = None
) -> Digest:
    """A digest from the typed view (the same numbers as the report)."""
    counts = {imp.value: 0 for imp in Importance}
    breaking: list[DigestItem] = []
    high: list[DigestItem] = []
    stale: tuple[str, str] | None = None
    for s in view.sections:
        broken = (
            {i.commit.sha for p in s.affects.projects for i in p.impacts if i.kind == "breaks"}
            if s.affects
            else set()
        )
        if s.stale_since:
            stale = (s.branch, s.stale_since)
        for c in s.commits:
            counts[c.importance.value] += 1
            breaks = c.sha in broken
            if breaks or c.importance is Importance.HIGH:
                reason = why_listed(list(c.analysis.reasons), view.lang)
                item = DigestItem(c.title, c.pr_url or c.url, reason, breaks, c.importance.value)
                (breaking if breaks else high).append(item)
    return Digest(
        name,
        view.day,
        view.lang,
        counts,
        (*breaking, *high),
        url,
        location,
        breaks=len(breaking),
        stale=stale,
    )


def size(text: str, unit: Unit) -> int:
    """How a platform measures ``text``: UTF-8 bytes or characters."""
    return len(text.encode("utf-8")) if unit == "bytes" else len(text)


def _esc(text: str, style: Style) -> str:
    if style == "slack":
        text = escape.clean(text)
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escape.inline(text)


def _linkable(url: str | None) -> bool:
    return bool(url) and len(url or "") <= URL_MAX and bool(_SAFE_URL.match(url or ""))


def _link(label: str, url: str | None, style: Style) -> str:
    if not _linkable(url):
        return label
    return f"<{url}|{label}>" if style == "slack" else f"[{label}]({url})"


def _short(title: str) -> str:
    title = escape.clean(title)
    return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1] + "…"


def header_lines(d: Digest, style: Style) -> list[str]:
    """The title, what breaks the reader's code, the counts and a stale source: sent whole."""
    bold = "*" if style == "slack" else "**"
    out = [f"{bold}{title_text(d, style)}{bold}"]
    if d.breaks:
        out.append("⚠️ " + t(d.lang, "digest.breaks", count=d.breaks))
    out.append(
        t(
            d.lang,
            "digest.counts",
            total=d.total,
            high=d.counts.get("high", 0),
            medium=d.counts.get("medium", 0),
            low=d.counts.get("low", 0),
        )
    )
    if d.week_start is not None and d.days_reported < 7:
        out.append(t(d.lang, "digest.week_days", count=d.days_reported))
    if d.stale is not None:
        branch, since = d.stale
        out.append("⚠️ " + t(d.lang, "digest.stale", branch=_esc(branch, style), date=since))
    return out


def title_text(d: Digest, style: Style | None) -> str:
    """``vllm · 2026-08-20``, or the week's first and last day for a roll-up; ``style``
    escapes the name for that platform (None: plain text)."""
    name = d.name if style is None else _esc(d.name, style)
    if d.week_start is not None:
        return t(
            d.lang, "digest.title_week", name=name, start=d.week_start.isoformat(),
            end=d.day.isoformat(),
        )  # fmt: skip
    return t(d.lang, "digest.title", name=name, date=d.day.isoformat())


def item_lines(d: Digest, style: Style) -> list[str]:
    """One line per listed commit: ⚠️ when it breaks the reader's code, its importance,
    its (shortened, escaped) title linked to the commit or PR, and its first reason."""
    out = []
    for i in d.high:
        line = "⚠️ " if i.breaks else ""
        line += EMOJI[Importance(i.importance)] + " "
        if i.day is not None:
            line += i.day.strftime("%m-%d") + " "
        line += _link(_esc(_short(i.title), style), i.url, style)
        if i.reason.strip():
            line += t(d.lang, "punct.colon") + _esc(_short(i.reason), style)
        out.append(line)
    return out


def footer_lines(d: Digest, style: Style, left_out: int) -> list[str]:
    """How many 🔴 items were dropped, the 🟡 count and where the full report is.

    Without a usable ``report_url`` the digest still says where to read the
    rest: the report's place in the archive.
    """
    out = []
    if left_out:
        out.append(t(d.lang, "digest.more", count=left_out))
    medium = d.counts.get("medium", 0)
    if medium:
        out.append(t(d.lang, "digest.medium", count=medium))
    if d.week_start is not None:  # a week has no one report to point to
        return out
    if _linkable(d.report_url):
        out.append("👉 " + _link(t(d.lang, "digest.full"), d.report_url, style))
    elif d.location:
        out.append("👉 " + t(d.lang, "digest.where", path=_code(d.location, style)))
    return out


def _code(text: str, style: Style) -> str:
    if style == "slack":
        return "`" + _esc(text.replace("`", "'"), style) + "`"
    return escape.code(text)


def pack(lines: list[str], limit: int, measure: Callable[[str], int], sep: str = "\n") -> list[str]:
    """Whole lines joined into as few texts of at most ``limit`` as they fill, in order.

    A line longer than ``limit`` on its own cannot be packed: ValueError.
    """
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        if measure(line) > limit:
            raise ValueError("a line is longer than the limit")
        if current and measure(sep.join([*current, line])) > limit:
            out.append(sep.join(current))
            current = []
        current.append(line)
    if current:
        out.append(sep.join(current))
    return out


def fit_lines(
    head: list[str],
    items: list[str],
    foot: Any,
    limit: int,
    measure: Callable[[str], int],
    sep: str = "\n",
) -> tuple[str, int]:
    """Join ``head + items[:k] + foot(left_out)`` with the largest k that fits ``limit``.

    ``foot`` is a function of how many items were left out. Returns the text
    and that number. Whole lines only: nothing is cut inside a line.
    """
    lo, hi = 0, len(items)
    best: tuple[str, int] | None = None
    while lo <= hi:  # the size grows with k, so search for the largest k that fits
        k = (lo + hi) // 2
        text = sep.join([*head, *items[:k], *foot(len(items) - k)])
        if measure(text) <= limit:
            best = (text, len(items) - k)
            lo = k + 1
        else:
            hi = k - 1
    if best is None:
        text = sep.join([*head, *foot(len(items))])
        return text, len(items)
    return best


def render_digest(
    d: Digest,
    style: Style,
    limit: int,
    unit: Unit = "chars",
    measure: Callable[[str], int] | None = None,
    sep: str = "\n",
) -> tuple[str, int]:
    """The digest as one text within ``limit``; returns it and how many 🔴 items were left out.

    ``measure`` overrides how a text is counted (e.g. its size once JSON-encoded);
    ``sep`` joins the lines.
    """
    return fit_lines(
        header_lines(d, style),
        item_lines(d, style),
        lambda n: footer_lines(d, style, n),
        limit,
        measure or (lambda text: size(text, unit)),
        sep,
    )


SLACK_SECTION_MAX = 3000
"""Slack: characters of one section block's text."""
SLACK_HEADER_MAX = 150
"""Slack: characters of a header block's plain_text."""
SLACK_MAX_BLOCKS = 50
"""Slack: blocks in one message."""
SLACK_MAX_TOTAL = 12_000
"""Characters of text over all blocks. Not a documented limit: Slack answers
``msg_blocks_too_long`` well below 50 full sections (reported near 13,200
characters, slackapi/bolt-js#2509), so the digest stays under that."""


def slack_blocks(
    d: Digest,
    *,
    section_max: int = SLACK_SECTION_MAX,
    max_blocks: int = SLACK_MAX_BLOCKS,
    total_max: int = SLACK_MAX_TOTAL,
) -> tuple[list[dict[str, Any]], int]:
    """The digest as Block Kit blocks; returns them and how many 🔴 items were left out.

    A header block (the title, plain text), section blocks holding whole 🔴
    lines (each text within ``section_max``), and a context block with the
    counts, how many items were left out, the 🟡 count and the report's link.
    """
    title = escape.clean(title_text(d, None))
    if len(title) > SLACK_HEADER_MAX:
        title = title[: SLACK_HEADER_MAX - 1] + "…"
    header = {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": True}}
    counts = header_lines(d, "slack")[1:]
    items = item_lines(d, "slack")

    def build(k: int) -> list[dict[str, Any]] | None:
        try:
            texts = pack(items[:k], section_max, len)
        except ValueError:
            return None
        context = [*counts, *footer_lines(d, "slack", len(items) - k)]
        blocks: list[dict[str, Any]] = [header]
        blocks += [{"type": "section", "text": {"type": "mrkdwn", "text": x}} for x in texts]
        elements = [{"type": "mrkdwn", "text": x} for x in context]
        blocks.append({"type": "context", "elements": elements})
        total = len(title) + sum(map(len, texts)) + sum(map(len, context))
        return blocks if len(blocks) <= max_blocks and total <= total_max else None

    lo, hi = 0, len(items)
    best: tuple[list[dict[str, Any]], int] | None = None
    while lo <= hi:  # more items never take fewer blocks or characters
        k = (lo + hi) // 2
        blocks = build(k)
        if blocks is not None:
            best, lo = (blocks, len(items) - k), k + 1
        else:
            hi = k - 1
    if best is None:  # not even the counts fit: say so in the fewest characters
        fallback = build(0) or [header]
        return fallback, len(items)
    return best


def why_listed(reasons: list[str], lang: str) -> str:
    """The reason a digest line gives: the model's own, else the first that says why it matters.

    A rules analysis starts with why it chose the type ("Type: title tag
    [bugfix]") and the base level ("Bug fix changes code behaviour"), which
    tell a reader nothing about why this commit matters; what raised it
    comes after them.
    """
    model = t(lang, "llm.model_reason", reason="")
    for reason in reasons:
        if model and reason.startswith(model):
            return reason[len(model) :]
    generic = [
        CATALOGUES[lang][key].split("{" + arg + "}")
        for key, arg in (("rule.r_type", "reason"), ("rule.r_code_change", "type"))
    ]
    telling = [r for r in reasons if not any(r.startswith(a) and r.endswith(b) for a, b in generic)]
    return (telling or reasons or [""])[0]
