"""Weekly trends: commits by change type, 🔴 by area, what affected your code.

Counted from the day summaries (no commit is read) and drawn at build time as SVG stacked bars
(readable without JavaScript), each with a ``<table>`` of the same numbers
for screen readers and for copying.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from html import escape

from markupsafe import Markup

BAR = 14
HEIGHT = 120
TOP_AREAS = 6
PALETTE = 10
"""Series colours ``s0``…``s9`` (site.css); further series reuse them."""


@dataclass(frozen=True, slots=True)
class Chart:
    """One stacked bar chart: per week, a count per series."""

    key: str
    title: str
    weeks: tuple[date, ...]
    series: tuple[tuple[str, str, tuple[int, ...]], ...]
    """(key, label, one count per week)."""


def week_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _weeks(days: Iterable[date]) -> tuple[date, ...]:
    found = sorted({week_of(d) for d in days})
    if not found:
        return ()
    out = [found[0]]
    while out[-1] < found[-1]:
        out.append(out[-1] + timedelta(days=7))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DayNumbers:
    """What one repository-day adds to the trends."""

    day: date
    types: dict[str, int]
    high_areas: dict[str, int]
    affects: int


def charts(
    days: list[DayNumbers],
    titles: dict[str, str],
    type_name: Callable[[str], str],
    other: str,
) -> list[Chart]:
    """The three charts of a set of repository-days."""
    weeks = _weeks(d.day for d in days)
    index = {w: i for i, w in enumerate(weeks)}
    by_type: dict[str, list[int]] = {}
    by_area: dict[str, list[int]] = {}
    affects = [0] * len(weeks)
    areas: Counter[str] = Counter()
    for d in days:
        for area, n in d.high_areas.items():
            areas[area or other] += n
    top = {a for a, _ in areas.most_common(TOP_AREAS)}
    for d in days:
        i = index[week_of(d.day)]
        for ty, n in d.types.items():
            by_type.setdefault(ty, [0] * len(weeks))[i] += n
        for area, n in d.high_areas.items():
            key = area or other
            by_area.setdefault(key if key in top else other, [0] * len(weeks))[i] += n
        affects[i] += d.affects
    return [
        Chart("types", titles["types"], weeks,
              tuple((k, type_name(k), tuple(v)) for k, v in sorted(by_type.items()))),
        Chart("high", titles["high"], weeks,
              tuple((k, k, tuple(v)) for k, v in sorted(by_area.items(), key=last(other)))),
        Chart("affects", titles["affects"], weeks,
              (("affects", titles["affects"], tuple(affects)),)),
    ]  # fmt: skip


def last(other: str) -> Callable[[tuple[str, list[int]]], tuple[bool, str]]:
    """A sort key that puts the series ``other`` after the named ones."""
    return lambda kv: (kv[0] == other, kv[0])


def svg(chart: Chart) -> Markup:
    """The chart as stacked bars, one per week, with a legend."""
    n = len(chart.weeks)
    totals = [sum(s[2][i] for s in chart.series) for i in range(n)]
    top = max(totals, default=0) or 1
    title = escape(chart.title)
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {max(n, 1) * BAR} {HEIGHT}" width="100%"'
        f' height="{HEIGHT}" preserveAspectRatio="none" aria-label="{title}"'
        f' data-chart="{escape(chart.key)}"><title>{title}</title>'
    ]
    labels = [escape(label) for _, label, _v in chart.series]
    for i, week in enumerate(chart.weeks):
        y = float(HEIGHT)
        for j, (_, _label, values) in enumerate(chart.series):
            v = values[i]
            if not v:
                continue
            h = v * HEIGHT / top
            y -= h
            parts.append(
                f'<rect x="{i * BAR}" y="{y:.1f}" width="{BAR - 2}" height="{h:.1f}"'
                f' class="s{j % PALETTE}"><title>{week}: {labels[j]} {v}</title></rect>'
            )
    parts.append("</svg>")
    legend = "".join(
        f'<li><span class="swatch s{j % PALETTE}"></span>{label}</li>'
        for j, label in enumerate(labels)
    )
    return Markup("".join(parts) + f'<ul class="legend">{legend}</ul>')


def table(chart: Chart, week_label: str) -> Markup:
    """The chart's numbers as a table: a row per week, a column per series."""
    head = "".join(f'<th scope="col">{escape(s[1])}</th>' for s in chart.series)
    rows = "".join(
        f'<tr><th scope="row">{week}</th>'
        + "".join(f"<td>{s[2][i]}</td>" for s in chart.series)
        + "</tr>"
        for i, week in enumerate(chart.weeks)
    )
    return Markup(
        f'<table class="numbers" data-table="{escape(chart.key)}"><thead><tr>'
        f'<th scope="col">{escape(week_label)}</th>{head}</tr></thead><tbody>{rows}</tbody></table>'
    )
