"""Weekly trends: commits by change type, 🔴 by area, what affected your code.

Counted from the commit records and drawn at build time as SVG stacked bars
(readable without JavaScript), each with a ``<table>`` of the same numbers
for screen readers and for copying.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from markupsafe import Markup

from repoherald.site.records import CommitRecord

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


def charts(
    commits: list[tuple[date, CommitRecord]],
    titles: dict[str, str],
    type_name: Callable[[str], str],
    other: str,
) -> list[Chart]:
    """The three charts of a set of (report day, commit)."""
    weeks = _weeks(d for d, _ in commits)
    index = {w: i for i, w in enumerate(weeks)}
    by_type: dict[str, list[int]] = {}
    by_area: dict[str, list[int]] = {}
    affects = [0] * len(weeks)
    areas = Counter(c.areas[0] if c.areas else other for _, c in commits if c.importance == "high")
    top = {a for a, _ in areas.most_common(TOP_AREAS)}
    for day, c in commits:
        i = index[week_of(day)]
        by_type.setdefault(c.change_type, [0] * len(weeks))[i] += 1
        if c.importance == "high":
            area = c.areas[0] if c.areas else other
            by_area.setdefault(area if area in top else other, [0] * len(weeks))[i] += 1
        if c.affects:
            affects[i] += 1
    return [
        Chart(
            "types",
            titles["types"],
            weeks,
            tuple((k, type_name(k), tuple(v)) for k, v in sorted(by_type.items())),
        ),
        Chart(
            "high",
            titles["high"],
            weeks,
            tuple((k, k, tuple(v)) for k, v in sorted(by_area.items(), key=last(other))),
        ),
        Chart(
            "affects", titles["affects"], weeks, (("affects", titles["affects"], tuple(affects)),)
        ),
    ]


def last(other: str) -> Callable[[tuple[str, list[int]]], tuple[bool, str]]:
    """A sort key that puts the series ``other`` after the named ones."""
    return lambda kv: (kv[0] == other, kv[0])


def svg(chart: Chart) -> Markup:
    """The chart as stacked bars, one per week, with a legend."""
    n = len(chart.weeks)
    totals = [sum(s[2][i] for s in chart.series) for i in range(n)]
    top = max(totals, default=0) or 1
    parts = [
        Markup(
            '<svg class="chart" role="img" viewBox="0 0 {w} {h}" width="100%" height="{h}"'
            ' preserveAspectRatio="none" aria-label="{t}" data-chart="{k}"><title>{t}</title>'
        ).format(w=max(n, 1) * BAR, h=HEIGHT, t=chart.title, k=chart.key)
    ]
    for i, week in enumerate(chart.weeks):
        y = float(HEIGHT)
        for j, (_, label, values) in enumerate(chart.series):
            v = values[i]
            if not v:
                continue
            h = v * HEIGHT / top
            y -= h
            parts.append(
                Markup(
                    '<rect x="{x}" y="{y:.1f}" width="{w}" height="{h:.1f}" class="s{c}">'
                    "<title>{week}: {label} {v}</title></rect>"
                ).format(
                    x=i * BAR,
                    y=y,
                    w=BAR - 2,
                    h=h,
                    c=j % PALETTE,
                    week=week.isoformat(),
                    label=label,
                    v=v,
                )
            )
    parts.append(Markup("</svg>"))
    legend = Markup("").join(
        Markup('<li><span class="swatch s{c}"></span>{label}</li>').format(
            c=j % PALETTE, label=label
        )
        for j, (_, label, _v) in enumerate(chart.series)
    )
    return Markup("").join(parts) + Markup('<ul class="legend">{}</ul>').format(legend)


def table(chart: Chart, week_label: str) -> Markup:
    """The chart's numbers as a table: a row per week, a column per series."""
    head = Markup("").join(Markup('<th scope="col">{}</th>').format(s[1]) for s in chart.series)
    rows = Markup("").join(
        Markup('<tr><th scope="row">{w}</th>{cells}</tr>').format(
            w=week.isoformat(),
            cells=Markup("").join(Markup("<td>{}</td>").format(s[2][i]) for s in chart.series),
        )
        for i, week in enumerate(chart.weeks)
    )
    return Markup(
        '<table class="numbers" data-table="{k}"><thead><tr><th scope="col">{wl}</th>{head}</tr>'
        "</thead><tbody>{rows}</tbody></table>"
    ).format(k=chart.key, wl=week_label, head=head, rows=rows)
