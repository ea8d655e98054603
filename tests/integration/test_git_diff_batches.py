"""One long-lived ``diff-tree --stdin`` answers every day's batch as a fresh git would.

:meth:`GitRepo.diff_first_parent` keeps one process for the whole run and
finds the end of each answer by a marker line that git echoes. These tests
compare its answers, batch after batch, with those of a separate git process
per batch, on history whose paths try to look like the marker or like
diff-tree's own output, and with an answer larger than a pipe holds.
"""

from __future__ import annotations

import dataclasses
import select

import pytest

from repoherald.errors import SourceError
from repoherald.models import Commit, FileChange
from repoherald.sources.git.parse import parse_diff_tree
from repoherald.sources.git.repo import _DIFF_OPTIONS, GitRepo, open_local, run_git
from tests.gitfixture import GitFixture


def one_shot(repo: GitRepo, commits: list[Commit]) -> dict[str, list[FileChange]]:
    """The answer of a git process of its own for this batch alone."""
    lines = [f"{c.sha} {c.parents[0]}" if c.parents else c.sha for c in commits]
    proc = run_git(
        repo.argv("diff-tree", "--stdin", *_DIFF_OPTIONS),
        input=("\n".join(lines) + "\n").encode("ascii"),
    )
    assert proc.returncode == 0, proc.stderr
    return parse_diff_tree(proc.stdout, [c.sha for c in commits])


@pytest.fixture
def history(git_repo: GitFixture) -> list[str]:
    """Oldest first: a root, odd paths, a rename, a binary file, and 2,500 files at once."""
    g = git_repo
    shas = []
    g.write("pkg/a.py", "def f(x):\n    return x\n")
    shas.append(g.commit("root", when="2026-03-01T10:00:00+00:00"))
    g.write("repoherald-end-of-batch 00\n.py", "x = 1\n")
    g.write("0" * 40 + " " + "1" * 40, "looks like a commit line\n")
    g.write("pkg/a.py", "def f(x, y=1):\n    return x + y\n")
    shas.append(g.commit("odd names", when="2026-03-02T10:00:00+00:00"))
    g.move("pkg/a.py", "pkg/b.py")
    g.write("data.bin", bytes(range(256)) * 4)
    shas.append(g.commit("rename and binary", when="2026-03-03T10:00:00+00:00"))
    g.write_many({f"gen/{'long-directory-name-' * 3}{i:05d}.txt": f"{i}\n" for i in range(2500)})
    shas.append(g.commit("many files", when="2026-03-04T10:00:00+00:00"))
    shas.append(g.commit("empty", when="2026-03-05T10:00:00+00:00"))
    return shas


def test_batches_on_one_process_equal_one_git_per_batch(
    git_repo: GitFixture, history: list[str]
) -> None:
    with open_local(str(git_repo.path)) as repo:
        commits = repo.read_commits(history)
        batches = [[commits[s]] for s in reversed(history)]
        batches.append([commits[s] for s in history])
        answers = [repo.diff_first_parent(batch) for batch in batches]
        process = repo._diff
        for batch, answer in zip(batches, answers, strict=True):
            assert answer == one_shot(repo, batch)
        assert process is not None and repo._diff is process  # the same git throughout
    assert len(answers[1][history[-2]]) == 2500
    odd = {f.path for f in answers[-1][history[1]]}
    assert "repoherald-end-of-batch 00\n.py" in odd
    assert repo._diff is None  # closed with the repository


def test_a_missing_commit_fails_that_batch_only(git_repo: GitFixture, history: list[str]) -> None:
    with open_local(str(git_repo.path)) as repo:
        commits = repo.read_commits(history)
        ghost = dataclasses.replace(commits[history[1]], sha="d" * 40)
        with pytest.raises(SourceError, match="diff-tree"):
            repo.diff_first_parent([ghost])
        after = repo.diff_first_parent([commits[history[1]]])
        assert after == one_shot(repo, [commits[history[1]]])


def test_a_request_larger_than_a_pipe_takes_at_once_is_answered_too(
    git_repo: GitFixture,
) -> None:
    """Small requests are written at once, larger ones by a thread: both answers are whole."""
    shas = []
    for i in range(60):
        git_repo.write(f"pkg/m{i % 7}.py", f"X = {i}\n")
        shas.append(git_repo.commit(f"c{i}", when=f"2026-03-01T10:{i:02d}:00+00:00"))
    with open_local(str(git_repo.path)) as repo:
        commits = repo.read_commits(shas)
        batch = [commits[s] for s in shas]
        assert len(shas) * 82 > select.PIPE_BUF  # "<sha> <parent>\n" per commit
        for request in (batch, batch[:3], batch):
            assert repo.diff_first_parent(request) == one_shot(repo, request)
