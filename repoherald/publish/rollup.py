"""Quiet days and weekly roll-ups: what a target is sent besides one message per day.

A repository-day without commits is *quiet*: a chat group does not want
"0 commits" every day a repository rests (or every day a stale clone
shows nothing), so a target skips it unless it sets ``send_empty``
(:func:`is_quiet`). A day whose source failed is not quiet: the failure
must be said.

A target with ``schedule = "weekly"`` gets no daily message. When the last
day of its week is delivered (the day before its ``weekday``: with
``"mon"``, Sunday, so a daily run on Monday sends it), it gets one message
per repository covering that day and the six before it: the week's 🔴 with
their reasons and the commits that break the reader's code
(:func:`weekly_rollup`). The roll-up is built from the archived JSON twins
of the week, the same files ``publish`` re-sends, as one JSON document of
the same shape with ``week_start`` set, so every publisher delivers it as
it delivers a day; the ledger files it under the week's last day.
"""

from __future__ import annotations

from datetime import date, timedelta

from repoherald.errors import PublishError
from repoherald.publish.base import Publication
from repoherald.render import twin
from repoherald.render.digest import digest_from_twin, render_digest

WEEK = 7
ROLLUP_TEXT_MAX = 200_000
"""Characters of a roll-up's Markdown (for e-mail and issues); chats fit their own limits."""


def ends_week(day: date, weekday: int) -> bool:
    """True when ``day`` is the last day of a week whose roll-up is sent on ``weekday``
    (0 Monday … 6 Sunday)."""
    return (day + timedelta(days=1)).weekday() == weekday


def week_ending(day: date) -> list[date]:
    """The seven days of the week whose last day is ``day``, oldest first."""
    return [day - timedelta(days=WEEK - 1 - i) for i in range(WEEK)]


def _twin(item: Publication) -> twin.Twin:
    try:
        return twin.read(item.json)
    except twin.TwinError as e:
        raise PublishError(f"{item.name} {item.day}: {e}") from None


def is_quiet(item: Publication) -> bool:
    """True for a report without commits and without a failed repository."""
    try:
        data = _twin(item)
    except PublishError:
        return False  # the publisher says what is wrong with it
    return not any(r.commits or r.error for r in data.repos)


def weekly_rollup(
    name: str, end: date, lang: str, days: dict[date, Publication], location: str | None = None
) -> Publication:
    """One publication for the week ending ``end`` from the days of it that have a report.

    Each commit keeps its report day (``report_date``); only the newest
    day's stale-clone note is kept, since a later day may show it fixed.
    """
    week = week_ending(end)
    sections: list[twin.TwinRepo] = []
    reported = [d for d in week if d in days]
    for day in reported:
        for repo in _twin(days[day]).repos:
            commits = [c.model_copy(update={"report_date": day}) for c in repo.commits]
            stale = repo.stale_since if day == reported[-1] else None
            sections.append(repo.model_copy(update={"commits": commits, "stale_since": stale}))
    identity = next((days[d].identity for d in reported if days[d].identity), "")
    week_twin = twin.Twin(
        schema_version=twin.SCHEMA_VERSION,
        kind="week",
        date=end,
        week_start=week[0],
        lang=lang,
        days_reported=len(reported),
        repos=sections,
    )
    text = twin.write_week(week_twin)
    digest = digest_from_twin(week_twin, name, location=location)
    markdown, _ = render_digest(digest, "markdown", ROLLUP_TEXT_MAX)
    return Publication(name, identity, end, lang, markdown + "\n", text, location=location)
