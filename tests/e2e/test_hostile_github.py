"""A hostile or broken answer about one commit costs that commit, never the repository-day.

``repoherald run`` over the loopback GitHub server, with one answer edited
the way the security probe did: a file with ``additions: -1e30``, a date in
the year 9999, a SHA or link holding ``<``, ``)`` or ``javascript:``, a pull
request numbered ``"abc"`` or ``1e400``. Each time the day's report is
written with every commit, the bad one marked (or its bad field dropped),
the exit status is 1 only when a commit failed, and no traceback is shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.gitfixture import GitFixture, run_repoherald
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub

REPO = "acme/widget"
TARGET = "Bump torch to 2.2"


def _files(edit: Callable[[dict[str, Any]], None]) -> Callable[[Any], Any]:
    def apply(obj: Any) -> Any:
        edit(obj["files"][0])
        return obj

    return apply


def _meta(edit: Callable[[dict[str, Any]], None]) -> Callable[[Any], Any]:
    def apply(obj: Any) -> Any:
        edit(obj)
        return obj

    return apply


def _raw(old: str, new: str) -> Callable[[Any], Any]:
    def apply(obj: Any) -> Any:
        return json.dumps(obj).replace(old, new, 1).encode()

    return apply


COMMIT_EDITS = {
    "additions -1e30": _files(lambda f: f.update(additions=-1e30)),
    "deletions 'many'": _files(lambda f: f.update(deletions="many")),
    "author date 9999-12-31": _meta(
        lambda c: c["commit"]["author"].update(date="9999-12-31T23:59:59Z")
    ),
    "sha with <": _meta(lambda c: c.update(sha="<img src=x onerror=alert(1)>")),
    "parent javascript:": _meta(lambda c: c["parents"][0].update(sha="javascript:alert(1)//)")),
}


@pytest.fixture
def widget(tmp_path: Path) -> GitFixture:
    fx = GitFixture.init(tmp_path / "widget-src")
    mixed_day(fx)
    return fx


def _run(tmp: Path, gh: FakeGitHub) -> tuple[int, str, dict[str, Any]]:
    (tmp / "repoherald.toml").write_text(
        f'[report]\ntz = "{TZ_NAME}"\nlang = "en"\n\n[github]\napi_url = "{gh.api_url}"\n\n'
        f'[[repos]]\nsource = "github:{REPO}"\nname = "widget"\n',
        encoding="utf-8",
    )
    proc = run_repoherald("run", "--date", str(DAY), "--home", str(tmp / "h"), cwd=tmp)
    assert "Traceback" not in proc.stderr, proc.stderr
    path = tmp / f"reports/{DAY.year}/widget/{DAY}.en.json"
    assert path.is_file(), f"the day was not reported: {proc.stderr}"
    by_title = {c["title"]: c for c in json.loads(path.read_text("utf-8"))["repos"][0]["commits"]}
    return proc.returncode, proc.stderr, by_title


def _sha_of(fx: GitFixture, title: str) -> str:
    return fx.text("log", "--format=%H", "--fixed-strings", f"--grep={title}", "-n1", "main")


@pytest.mark.parametrize("edit", COMMIT_EDITS, ids=list(COMMIT_EDITS))
def test_one_malformed_commit_answer_fails_that_commit_and_the_day_is_reported(
    widget: GitFixture, tmp_path: Path, edit: str
) -> None:
    sha = _sha_of(widget, TARGET)
    with FakeGitHub() as gh:
        gh.add_repo(REPO, widget.path)
        gh.fault(rf"/commits/{sha}(\?|$)", "edit", times=-1, edit=COMMIT_EDITS[edit])
        status, stderr, by_title = _run(tmp_path, gh)
    assert status == 1, stderr
    assert len(by_title) == 10  # the bad commit keeps its place in the day
    failed = [c for c in by_title.values() if c["analysis"]["error"]]
    assert [c["sha"] for c in failed] == [sha]
    assert "malformed" in failed[0]["analysis"]["error"]
    failure_lines = [ln for ln in stderr.splitlines() if "failed:" in ln]
    assert len(failure_lines) == 1 and sha[:7] in failure_lines[0], stderr


def test_a_commit_listed_with_a_date_in_9999_is_one_failure_not_a_lost_day(
    widget: GitFixture, tmp_path: Path
) -> None:
    sha = _sha_of(widget, TARGET)

    def future(items: Any) -> Any:
        for item in items:
            if item["sha"] == sha:
                item["commit"]["committer"]["date"] = "9999-12-31T23:59:59Z"
        return items

    with FakeGitHub() as gh:
        gh.add_repo(REPO, widget.path)
        gh.fault(r"/commits\?", "edit", times=-1, edit=future)
        gh.fault(rf"/commits/{sha}(\?|$)", "edit", times=-1, edit=_meta(lambda c: future([c])))
        status, stderr, by_title = _run(tmp_path, gh)
    assert status == 1, stderr
    assert len(by_title) == 10
    assert [c["sha"] for c in by_title.values() if c["analysis"]["error"]] == [sha]


@pytest.mark.parametrize(
    "edit",
    [
        _raw('"number": 102', '"number": "abc"'),
        _raw('"number": 102', '"number": 1e400'),
        _raw('"number": 102', '"number": -5'),
    ],
    ids=["abc", "1e400", "negative"],
)
def test_a_pull_request_with_a_bad_number_costs_only_its_context(
    widget: GitFixture, tmp_path: Path, edit: Callable[[Any], Any]
) -> None:
    first = _sha_of(widget, "run() takes b")
    second = _sha_of(widget, "clean() can lower-case")
    with FakeGitHub() as gh:
        gh.add_repo(REPO, widget.path)
        gh.add_pull(REPO, 101, [first], title="run() takes b")
        gh.add_pull(REPO, 102, [second], title="clean() can lower-case")
        gh.fault(r"/pulls/102$", "edit", times=-1, edit=edit)
        status, stderr, by_title = _run(tmp_path, gh)
    assert status == 1, stderr
    assert len(by_title) == 10 and not any(c["analysis"]["error"] for c in by_title.values())
    pulls = {c["sha"]: c["facts"]["pull_request"] for c in by_title.values()}
    # The newer commit's PR (asked first) is malformed; the older one still gets its own.
    assert pulls[second] is None and pulls[first]["number"] == 101
    assert [ln for ln in stderr.splitlines() if "failed:" in ln and second[:7] in ln], stderr


def test_links_with_scripts_or_parentheses_are_never_rendered_as_links(
    widget: GitFixture, tmp_path: Path
) -> None:
    first = _sha_of(widget, "run() takes b")

    def hostile_repo(obj: Any) -> Any:
        obj["html_url"] = "javascript:alert(1)//"
        return obj

    def hostile_pull(obj: Any) -> Any:
        obj["html_url"] = "https://example.com/x)[y](javascript:alert(1)"
        return obj

    with FakeGitHub() as gh:
        gh.add_repo(REPO, widget.path)
        gh.add_pull(REPO, 101, [first], title="run() takes b")
        gh.fault(rf"/repos/{REPO}$", "edit", times=-1, edit=hostile_repo)
        gh.fault(r"/pulls/101$", "edit", times=-1, edit=hostile_pull)
        status, stderr, by_title = _run(tmp_path, gh)
    assert status == 0, stderr
    page = (tmp_path / f"reports/{DAY.year}/widget/{DAY}.en.md").read_text("utf-8")
    assert "javascript:" not in page and "example.com/x)" not in page
    assert by_title["[Feature] run() takes b; Engine is gone (#101)"]["pr_number"] == 101
