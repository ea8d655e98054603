"""Which days to report: ``--date``/``--since``/``--until`` in the report's ``--tz``.

Days are local calendar days of the zone: ``today`` and ``yesterday`` are read
there, ``latest`` means the latest active day, a day that has not started yet
is refused, and a range reaching into the future stops at today.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from repoherald.errors import UsageError


@dataclass(frozen=True, slots=True)
class DaySelection:
    """Which local calendar days to report: explicit days, or the latest active one."""

    days: tuple[date, ...] = ()
    latest: bool = False
    today: date | None = None
    """Today in the report's zone when the selection was made: that day is still partial."""
    notices: tuple[str, ...] = ()
    """What the user should know about the selection (e.g. a range cut at today)."""


def check_tz(name: str) -> str:
    """Validate an IANA zone name."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(
            f"unknown time zone {name!r}: use an IANA name such as Asia/Shanghai or UTC"
        ) from None
    return name


def parse_day(
    text: str, tz: ZoneInfo, *, now: datetime | None = None, flag: str = "--date"
) -> date:
    """Parse ``YYYY-MM-DD``, ``today`` or ``yesterday`` (in ``tz``)."""
    today = (now or datetime.now(tz)).astimezone(tz).date()
    word = text.strip().lower()
    if word == "today":
        return today
    if word == "yesterday":
        return today - timedelta(days=1)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        words = "'yesterday' or 'latest'" if flag == "--date" else "'today' or 'yesterday'"
        raise UsageError(f"malformed date {text!r} for {flag}: use YYYY-MM-DD, {words}")
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"invalid date {text!r} for {flag}: no such calendar day") from None


MAX_DAYS = 3660


def select_days(
    tz: ZoneInfo,
    day: str | None,
    since: str | None,
    until: str | None,
    *,
    now: datetime | None = None,
) -> DaySelection:
    """Turn --date / --since / --until into the days to report (defaults to yesterday).

    A day that has not started yet in ``tz`` is a usage error; a range that
    reaches into the future stops at today and says so.
    """
    today = (now or datetime.now(tz)).astimezone(tz).date()
    if day is not None and (since is not None or until is not None):
        raise UsageError("--date cannot be combined with --since/--until: use one or the other")
    if day is not None:
        if day.strip().lower() == "latest":
            return DaySelection(latest=True, today=today)
        single = parse_day(day, tz, now=now)
        _not_future(single, today, tz, "--date")
        return DaySelection(days=(single,), today=today)
    if since is None and until is None:
        return DaySelection(days=(today - timedelta(days=1),), today=today)
    if since is None:
        raise UsageError("--until needs --since: give the first day of the range too")
    first = parse_day(since, tz, now=now, flag="--since")
    last = parse_day(until, tz, now=now, flag="--until") if until else today - timedelta(1)
    if last < first:
        raise UsageError(f"--until {last} is before --since {first}: swap them")
    _not_future(first, today, tz, "--since")
    notices: tuple[str, ...] = ()
    if last > today:
        notices = (f"the range stops at today, {today} ({tz.key}): later days have not started",)
        last = today
    count = (last - first).days + 1
    if count > MAX_DAYS:
        raise UsageError(f"{count} days requested: ask for at most {MAX_DAYS} at a time")
    days = tuple(first + timedelta(days=i) for i in range(count))
    return DaySelection(days=days, today=today, notices=notices)


def _not_future(day: date, today: date, tz: ZoneInfo, flag: str) -> None:
    if day > today:
        raise UsageError(
            f"{flag} {day} has not started yet in {tz.key} (today is {today}):"
            " ask for today or an earlier day"
        )
