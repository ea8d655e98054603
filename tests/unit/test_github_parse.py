"""GitHub JSON -> models, repository names, and the per-file patches the LLM stage reads."""

from __future__ import annotations

from typing import Any

import pytest

from repoherald.config import GitHubSettings
from repoherald.errors import SourceError
from repoherald.github.parse import (
    ShapeError,
    commit_from_json,
    file_from_json,
    parse_time,
    pick_pull,
    pull_from_json,
)
from repoherald.github.patch import file_patch
from repoherald.github.ref import RepoRef, repo_from_web_url
from repoherald.models import CommitPatch, FileChange, FileStatus


def test_dates_keep_their_instant_and_any_offset() -> None:
    assert parse_time("2026-03-10T01:00:00Z") == (1773104400, 0)
    assert parse_time("2026-03-10T09:00:00+08:00") == (1773104400, 480)
    with pytest.raises(ShapeError):
        parse_time("2026-03-10T09:00:00")


def test_a_commit_element_becomes_a_commit() -> None:
    item = {
        "sha": "a" * 40,
        "parents": [{"sha": "b" * 40}, {"sha": "c" * 40}],
        "commit": {
            "author": {"name": "Ada", "email": "ada@example.com", "date": "2026-03-10T01:00:00Z"},
            "committer": {"name": "", "email": "", "date": "2026-03-10T02:00:00Z"},
            "message": "Title\r\n\r\nBody",
        },
    }
    c = commit_from_json(item, files_truncated=True)
    assert (c.sha, c.parents, c.author.name, c.committer.name) == (
        "a" * 40,
        ("b" * 40, "c" * 40),
        "Ada",
        "?",
    )
    assert (c.author_time, c.commit_time, c.title, c.body) == (
        1773104400,
        1773108000,
        "Title",
        "Body",
    )
    assert c.files_truncated
    with pytest.raises(ShapeError):
        commit_from_json({"sha": "x", "parents": []})


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("added", FileStatus.ADDED),
        ("removed", FileStatus.DELETED),
        ("modified", FileStatus.MODIFIED),
        ("renamed", FileStatus.RENAMED),
        ("copied", FileStatus.COPIED),
        ("changed", FileStatus.TYPE_CHANGED),
        ("unchanged", FileStatus.MODIFIED),
    ],
)
def test_every_github_file_status_maps(status: str, expected: FileStatus) -> None:
    f = file_from_json(
        {"filename": "b.py", "status": status, "previous_filename": "a.py", "additions": 2}
    )
    assert f.status is expected and f.added == 2 and f.patch is None
    assert f.old_path == ("a.py" if expected in (FileStatus.RENAMED, FileStatus.COPIED) else None)


def pr(number: int, **kw: Any) -> dict[str, Any]:
    return {"number": number, "merged_at": None, "base": {"ref": "main"}, **kw}


def test_the_pull_request_that_brought_a_commit_in_is_preferred() -> None:
    sha = "f" * 40
    merged_elsewhere = pr(1, merged_at="2026-01-01T00:00:00Z", base={"ref": "release"})
    merged_here = pr(2, merged_at="2026-01-01T00:00:00Z")
    its_merge = pr(3, merged_at="2026-01-01T00:00:00Z", merge_commit_sha=sha)
    open_one = pr(4)
    assert pick_pull([open_one, merged_elsewhere, merged_here, its_merge], sha, "main") == its_merge
    assert pick_pull([open_one, merged_elsewhere, merged_here], sha, "main") == merged_here
    assert pick_pull([open_one, merged_elsewhere], sha, "main") == merged_elsewhere
    assert pick_pull([open_one], sha, "main") == open_one
    assert pick_pull([], sha, "main") is None


def test_a_pull_request_keeps_labels_author_and_merger() -> None:
    p = pull_from_json(
        {
            "number": 9,
            "title": "Speed up",
            "body": None,
            "labels": [{"name": "performance"}, {"name": ""}, "junk"],
            "user": {"login": "ada"},
            "merged_by": None,
            "html_url": "https://github.com/a/b/pull/9",
        }
    )
    assert (p.number, p.body, p.labels, p.author, p.merged_by) == (
        9,
        "",
        ("performance",),
        "ada",
        None,
    )


@pytest.mark.parametrize(
    "text", ["acme", "acme/widget/extra", "../etc", "acme/..", "-x/y", "a b/c"]
)
def test_malformed_owner_name_is_a_source_error_naming_the_repository(text: str) -> None:
    with pytest.raises(SourceError, match=r"^mine: .* is not a GitHub owner/name"):
        RepoRef.parse(text, "mine")


def test_owner_name_from_a_web_url_on_github_or_the_enterprise_host() -> None:
    gh = GitHubSettings()
    ghe = GitHubSettings(api_url="https://git.corp.example/api/v3")
    assert repo_from_web_url("https://github.com/vllm-project/vllm", gh) == RepoRef(
        "vllm-project", "vllm"
    )
    assert repo_from_web_url("https://git.corp.example/team/tool.git", ghe) == RepoRef(
        "team", "tool"
    )
    assert repo_from_web_url("https://gitlab.com/a/b", gh) is None
    assert repo_from_web_url("https://github.com/a/b/tree/main", gh) is None
    assert repo_from_web_url(None, gh) is None


def test_githubs_patches_become_one_file_patch_per_file_with_gits_headers() -> None:
    files = [
        FileChange(
            "a.py",
            FileStatus.MODIFIED,
            added=1,
            deleted=1,
            old_mode="100644",
            new_mode="100755",
            old_blob="1" * 40,
            new_blob="2" * 40,
        ),
        FileChange(
            "logo.png", FileStatus.ADDED, binary=True, new_mode="100644", new_blob="3" * 40, size=99
        ),
        FileChange(
            "new.md",
            FileStatus.RENAMED,
            old_path="old.md",
            old_mode="100644",
            new_mode="100644",
            old_blob="4" * 40,
            new_blob="4" * 40,
        ),
        FileChange(
            "big.py",
            FileStatus.ADDED,
            added=5000,
            new_mode="100644",
            new_blob="5" * 40,
            patch_withheld=True,
        ),
    ]
    hunks = ["@@ -1 +1 @@\n-x = 1\n+x = 2", None, None, None]
    patch = CommitPatch(tuple(file_patch(f, h) for f, h in zip(files, hunks, strict=True)))
    text = patch.text
    assert text.count("diff --git ") == 4
    assert "old mode 100644\nnew mode 100755\nindex 1111111..2222222\n--- a/a.py" in text
    assert "Binary files /dev/null and b/logo.png differ" in text
    assert "rename from old.md\nrename to new.md\n" in text
    parts = patch.files
    assert [p.path for p in parts] == ["a.py", "logo.png", "new.md", "big.py"]
    assert parts[0].hunks == ("@@ -1 +1 @@\n-x = 1\n+x = 2\n",)
    assert parts[1].binary and parts[3].hunks == () and parts[3].added == 5000
