"""The flags reach the merge as one structured value, grouped like the CLI's option groups."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.config import Overrides, build_settings, merge_settings
from repoherald.config.overrides import DayOverrides, LlmOverrides, PlaceOverrides, RepoOverrides

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)


def test_keywords_are_grouped_by_option_group() -> None:
    grouped = Overrides.from_options(
        repos=("x",), watch=("a/**",), day="2026-03-01", lang="en", home="h",
        llm_model="m", llm_concurrency=2, no_llm=True,
    )  # fmt: skip
    assert grouped == Overrides(
        repo=RepoOverrides(repos=("x",), watch=("a/**",)),
        days=DayOverrides(day="2026-03-01"),
        place=PlaceOverrides(lang="en", home="h"),
        llm=LlmOverrides(model="m", concurrency=2, no_llm=True),
    )


def test_an_unknown_keyword_is_refused() -> None:
    with pytest.raises(TypeError, match="llm_modle"):
        Overrides.from_options(llm_modle="m")


def test_the_flat_and_the_grouped_call_merge_alike(tmp_path: Path) -> None:
    flat = build_settings(
        repos=("x",), day="2026-03-01", lang="en", cwd=tmp_path, now=NOW,
        llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_token_budget=10,
    )  # fmt: skip
    grouped = merge_settings(
        Overrides(
            repo=RepoOverrides(repos=("x",)),
            days=DayOverrides(day="2026-03-01"),
            place=PlaceOverrides(lang="en"),
            llm=LlmOverrides(base_url="http://127.0.0.1:9/v1", model="m", token_budget=10),
        ),
        cwd=tmp_path,
        now=NOW,
    )
    assert flat == grouped
    assert grouped.lang == "en" and grouped.llm is not None and grouped.llm.token_budget == 10
