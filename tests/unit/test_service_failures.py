"""``run``'s failure lines name each repository once, whoever put the name in."""

from __future__ import annotations

from repoherald.config.repos import RepoConfig
from repoherald.pipeline.identity import identify
from repoherald.pipeline.run import RunResult
from repoherald.pipeline.service import RepoOutcome, ServiceResult

GHOST = identify(RepoConfig(source="github:acme/ghost", name="ghost"))
SPOOK = identify(RepoConfig(source="github:acme/spook"))  # filed as spook, shown as acme/spook
PHANTOM = identify(RepoConfig(source="/x", name="phantom"))
UP = identify(RepoConfig(source="github:acme/up"))


def _result(*failures: str, names: tuple[str, ...] = ("acme/up",)) -> RunResult:
    return RunResult([], [], list(failures), 0, 0, names=names)


def test_each_line_names_its_repository_once() -> None:
    outcomes = [
        # A source error that already starts with the configured name.
        RepoOutcome(GHOST, (), error="ghost: not found on GitHub (HTTP 404 for /repos/a/g)"),
        # ... or with owner/name, the repository's other name.
        RepoOutcome(SPOOK, (), error="acme/spook: access refused"),
        # A git error that names only the path.
        RepoOutcome(PHANTOM, (), error="repository path /x does not exist: check it"),
        RepoOutcome(
            UP,
            (),
            result=_result(
                "acme/up 1234567: LLM analysis failed: HTTP 500",
                "acme/up: downstream plug could not be indexed: boom",
                "LLM endpoint http://h/v1 unavailable after 3 consecutive failures (x)",
                "store: the disk is full",
            ),
        ),
    ]
    assert ServiceResult(outcomes).failures == [
        "ghost: not found on GitHub (HTTP 404 for /repos/a/g)",
        "acme/spook: access refused",
        "phantom: repository path /x does not exist: check it",
        "acme/up 1234567: LLM analysis failed: HTTP 500",
        "acme/up: downstream plug could not be indexed: boom",
        "up: LLM endpoint http://h/v1 unavailable after 3 consecutive failures (x)",
        "up: store: the disk is full",
    ]


def test_a_name_is_only_a_prefix_when_a_separator_follows() -> None:
    outcome = RepoOutcome(UP, (), error="upstream moved: check the URL")
    assert ServiceResult([outcome]).failures == ["up: upstream moved: check the URL"]
