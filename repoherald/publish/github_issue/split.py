"""Cutting a report into an issue body and follow-up comments, each within GitHub's limit.

GitHub refuses an issue or comment body over 65,536 characters (HTTP 422).
A day with many commits is longer than that, so the report is cut at
section boundaries (``##``, ``###``, and above all the ``####`` commit
sections) and packed greedily: the body first (it keeps the title and the
table of contents), then as many comments as needed. A section longer than
a whole part (one enormous commit) is cut at line boundaries, with a
visible note at each cut; a single line longer than a part is cut at a
space outside any link. Nothing is dropped: the parts joined are the report.

Sizes are counted in UTF-16 code units (an emoji counts two), never fewer
than the characters GitHub counts, with a margin kept free.

Links to headings (``[x](#anchor)``) must still work once the headings sit
in different comments, where GitHub renders each comment on its own (so
heading ids restart per comment). :func:`link_parts` rewrites each link:
to the heading's id within its own part when it is in the same part or the
body, and to the comment's URL (``…#issuecomment-<id>``) when it is in a
comment. Every part is measured as if each of its links had grown to a full
comment URL, so the rewrite can never push a part over the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial

from repoherald.i18n import t
from repoherald.render.slug import Slugger, markdown_inline_to_text

LIMIT = 65_536
"""GitHub's maximum issue body or comment, in characters."""
MARGIN = 1_024
"""Kept free in every part, for the marker line and for GitHub's own counting."""

_HEADING = re.compile(r"^(#{1,6}) +(.*?)(?: +#+)? *$")
_BOUNDARY = re.compile(r"^#{2,4} ")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"(?<!\\)\]\(#([^)\s]+)\)")
_ANY_LINK = re.compile(r"\[[^\]\n]*\]\([^)\n]*\)")


def size(text: str) -> int:
    """``text``'s length in UTF-16 code units: at least the characters GitHub counts."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Part:
    """One issue body or comment: its Markdown before links are rewritten, and its headings."""

    text: str
    anchors: dict[str, str] = field(default_factory=dict)
    """Each heading's id in the whole report -> its id when this part is rendered alone."""


def split_report(markdown: str, budget: int, link_size: int, lang: str) -> list[Part]:
    """``markdown`` cut into parts of at most ``budget`` units once links are rewritten.

    ``link_size`` bounds the length of a rewritten link target (a comment URL).
    """
    units = _units(markdown)
    note = "\n\n" + t(lang, "issue.continued") + "\n"
    texts: list[str] = []
    current = ""
    for unit in units:
        if _cost(current + unit, link_size) <= budget:
            current += unit
            continue
        if current:
            texts.append(current)
            current = ""
        if _cost(unit, link_size) <= budget:
            current = unit
            continue
        pieces = _cut(unit, budget - size(note), link_size)
        texts.extend(p + note for p in pieces[:-1])
        current = pieces[-1]
    if current or not texts:
        texts.append(current)
    return _with_anchors(texts)


def link_parts(parts: list[Part], html_url: str, comment_ids: list[int]) -> list[str]:
    """The final text of each part, its heading links pointing where the headings really are.

    ``comment_ids[i]`` is the id of the comment holding ``parts[i + 1]``.
    """
    where: dict[str, tuple[int, str]] = {}
    for i, part in enumerate(parts):
        for anchor, local in part.anchors.items():
            where.setdefault(anchor, (i, local))

    def rewrite(i: int, m: re.Match[str]) -> str:
        found = where.get(m.group(1))
        if found is None:
            return m.group(0)
        j, local = found
        if j == i or j == 0:
            return f"](#{local})"
        return f"]({html_url}#issuecomment-{comment_ids[j - 1]})"

    return [_LINK.sub(partial(rewrite, i), part.text) for i, part in enumerate(parts)]


def _cost(text: str, link_size: int) -> int:
    return size(text) + link_size * len(_LINK.findall(text))


def _units(markdown: str) -> list[str]:
    """The report cut before each ``##``–``####`` heading outside code; a bare heading
    stays with what follows it, so a part never ends on a heading."""
    units: list[str] = []
    current: list[str] = []
    fence = ""
    for line in markdown.splitlines(keepends=True):
        fence, toggled = _fence_after(line, fence)
        if not toggled and not fence and _BOUNDARY.match(line) and _has_body(current):
            units.append("".join(current))
            current = []
        current.append(line)
    if current:
        units.append("".join(current))
    return units


def _fence_after(line: str, fence: str) -> tuple[str, bool]:
    """The open code fence after ``line`` (empty outside code), and whether it opened or closed."""
    m = _FENCE.match(line)
    if m is None:
        return fence, False
    mark = m.group(1)
    if not fence:
        return mark, True
    if mark[0] == fence[0] and len(mark) >= len(fence):
        return "", True
    return fence, False


def _has_body(lines: list[str]) -> bool:
    """True when ``lines`` hold more than headings and blank lines."""
    return any(line.strip() and not _HEADING.match(line) for line in lines)


def _cut(unit: str, room: int, link_size: int) -> list[str]:
    """``unit`` cut at line boundaries (a too-long line at a space outside links)."""
    pieces: list[str] = []
    current = ""
    for line in unit.splitlines(keepends=True):
        while _cost(current + line, link_size) > room:
            left = room - _cost(current, link_size)
            if current and (_cost(line, link_size) <= room or left < room // 4):
                pieces.append(current)
                current = ""
                continue
            at = _cut_line(line, left, link_size)
            pieces.append(current + line[:at] + "\n")
            current, line = "", line[at:]
        current += line
    if current or not pieces:
        pieces.append(current)
    return pieces


def _cut_line(line: str, room: int, link_size: int) -> int:
    """Where to cut ``line`` so its head fits: after a space, never inside a link.

    Python strings index code points, so a cut never falls inside a character.
    """
    low, high = 1, len(line) - 1
    while low < high:  # the longest head that fits, by bisection
        mid = (low + high + 1) // 2
        if _cost(line[:mid], link_size) <= room - 1:
            low = mid
        else:
            high = mid - 1
    limit = low
    links = [(m.start(), m.end()) for m in _ANY_LINK.finditer(line)]
    at = line.rfind(" ", 0, limit) + 1 or limit
    for start, end in links:
        if start < at < end:
            at = start if start > 0 else min(end, limit)
    return max(1, at)


def _with_anchors(texts: list[str]) -> list[Part]:
    """Parts with their headings' ids: in the whole report, and in the part alone."""
    whole = Slugger()
    parts = []
    for text in texts:
        alone = Slugger()
        part = Part(text)
        fence = ""
        for line in text.splitlines():
            fence, toggled = _fence_after(line, fence)
            heading = None if fence or toggled else _HEADING.match(line)
            if heading:
                plain = markdown_inline_to_text(heading.group(2))
                part.anchors.setdefault(whole.slug(plain), alone.slug(plain))
        parts.append(part)
    return parts
