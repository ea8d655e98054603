"""The calendar heat-map of a year: one square per day, darker with more commits.

Drawn at build time as inline SVG (readable without JavaScript); each square
has a ``<title>`` with the day's numbers, and links to the day's page when
there is one. Colours come from CSS classes, so dark mode restyles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from markupsafe import Markup, escape

CELL = 12
DAYS = 371
"""53 weeks: the year up to the newest day, aligned to whole weeks."""


@dataclass(frozen=True, slots=True)
class DayCount:
    commits: int
    high: int
    href: str | None = None


def _level(n: int, top: int) -> int:
    if n <= 0:
        return 0
    return min(4, 1 + (4 * n - 1) // max(top, 1))


def heatmap(counts: dict[date, DayCount], label: str, last: date | None = None) -> Markup:
    """The SVG heat-map of the 53 weeks ending at ``last`` (default: the newest day counted)."""
    end = last or (max(counts) if counts else date.today())
    start = end - timedelta(days=DAYS - 1)
    start -= timedelta(days=start.weekday())
    top = max((c.commits for c in counts.values()), default=0)
    weeks = (end - start).days // 7 + 1
    parts = [
        Markup(
            '<svg class="heatmap" role="group" viewBox="0 0 {w} {h}" width="100%"'
            ' preserveAspectRatio="xMinYMin meet" aria-label="{label}"><title>{label}</title>'
        ).format(w=weeks * CELL, h=7 * CELL, label=label)
    ]
    day = start
    while day <= end:
        c = counts.get(day, DayCount(0, 0))
        x = (day - start).days // 7 * CELL
        y = day.weekday() * CELL
        cls = f"l{_level(c.commits, top)}" + (" hot" if c.high else "")
        rect = Markup(
            '<rect x="{x}" y="{y}" width="{s}" height="{s}" rx="2" class="{cls}"'
            ' data-date="{d}" data-commits="{n}" data-high="{h}">'
            "<title>{d}: {n} · 🔴 {h}</title></rect>"
        ).format(x=x, y=y, s=CELL - 2, cls=cls, d=day.isoformat(), n=c.commits, h=c.high)
        if c.href:
            rect = Markup('<a href="{href}">{rect}</a>').format(href=c.href, rect=rect)
        parts.append(rect)
        day += timedelta(days=1)
    parts.append(Markup("</svg>"))
    return Markup("").join(parts) if parts else Markup(escape(""))
