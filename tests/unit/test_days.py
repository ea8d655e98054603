"""Day selection against the clock: future days, ranges into the future, partial today."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from repoherald.config import select_days
from repoherald.errors import UsageError

SHANGHAI = ZoneInfo("Asia/Shanghai")
# 2026-08-20 23:30 UTC is already 2026-08-21 07:30 in Shanghai.
NOW = datetime(2026, 8, 20, 23, 30, tzinfo=UTC)


def test_a_day_that_has_not_started_in_the_zone_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--date 2026-08-22 has not started yet in Asia/Shanghai"):
        select_days(SHANGHAI, "2026-08-22", None, None, now=NOW)


def test_today_in_the_zone_is_allowed_and_marked_as_today() -> None:
    sel = select_days(SHANGHAI, "2026-08-21", None, None, now=NOW)
    assert sel.days == (date(2026, 8, 21),)
    assert sel.today == date(2026, 8, 21)


def test_a_range_into_the_future_stops_at_today_and_says_so() -> None:
    sel = select_days(SHANGHAI, None, "2026-08-19", "2026-08-30", now=NOW)
    assert sel.days == (date(2026, 8, 19), date(2026, 8, 20), date(2026, 8, 21))
    assert len(sel.notices) == 1
    assert "stops at today, 2026-08-21" in sel.notices[0]


def test_a_range_that_starts_in_the_future_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--since 2026-09-01 has not started"):
        select_days(SHANGHAI, None, "2026-09-01", "2026-09-03", now=NOW)


def test_since_latest_is_refused_with_words_that_apply_to_since() -> None:
    with pytest.raises(UsageError) as err:
        select_days(SHANGHAI, None, "latest", None, now=NOW)
    assert "for --since" in str(err.value)
    assert "latest" not in str(err.value).split(":", 1)[1]
