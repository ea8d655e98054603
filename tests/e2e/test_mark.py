"""``repoherald mark``: a correction is stored, shown beside the verdict, exported as labels.

End to end: a real repository, real runs writing real reports into a real
store, the command line in this process, and an LLM server on 127.0.0.1 to
show that a correction never reaches an analysis or its cache.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.goldset import load_gold
from repoherald.cli import main
from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture
from tests.integration.test_llm import good
from tests.llm_server import FakeLLM

DAY = "2026-05-01"
TITLES = ("Add the parser", "Update the docs", "Fix the loader")


@pytest.fixture
def repo(git_repo: GitFixture) -> GitFixture:
    for i, title in enumerate(TITLES):
        path = f"docs/page_{i}.md" if "docs" in title else f"src/app/mod_{i}.py"
        git_repo.write(path, f"def f_{i}(x):\n    return x + {i}\n")
        git_repo.commit(title, when=f"{DAY}T0{i + 1}:00:00+00:00")
    return git_repo


def report(tmp_path: Path, repo: GitFixture, lang: str = "en", **kw: Any) -> dict[str, Any]:
    settings = build_settings(
        repos=(str(repo.path),), day=DAY, tz="UTC", lang=lang, out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, name="app", **kw,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    md = next(p for p in result.written if p.suffix == ".md").read_text("utf-8")
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    commits = {c["title"]: c for c in twin["repos"][0]["commits"]}
    return {"md": md, "commits": commits, "result": result}


def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """``repoherald mark ...`` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exited:
        main(["mark", *args, "--home", str(tmp_path / "home")])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    code = exited.value.code
    return int(code) if isinstance(code, int) else 0, out, err


def sha_of(day: dict[str, Any], title: str) -> str:
    return str(day["commits"][title]["sha"])


def test_a_correction_shows_beside_the_verdict_when_the_day_is_written_again(
    repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = report(tmp_path, repo)
    sha = sha_of(before, "Update the docs")
    code, out, err = cli(
        capsys, tmp_path, sha[:7], "--importance", "high", "--type", "bugfix",
        "--reason", "It documents the\tflag our deployment\nrelies on",
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith(f"app {sha[:12]}: marked high (bugfix);")

    after = report(tmp_path, repo)
    commit = after["commits"]["Update the docs"]
    assert commit["analysis"] == before["commits"]["Update the docs"]["analysis"]
    assert commit["correction"]["importance"] == "high"
    assert commit["correction"]["change_type"] == "bugfix"
    assert commit["correction"]["reason"] == "It documents the flag our deployment relies on"
    assert after["commits"]["Add the parser"]["correction"] is None
    md = after["md"]
    tool = before["commits"]["Update the docs"]["analysis"]["importance"]
    badge = {"high": "🔴 High", "medium": "🟡 Medium", "low": "🟢 Low"}[tool]
    assert f"**⚡ Importance**: {badge}  \n**✍️ Reader's correction**: 🔴 High · Bug fix:" in md
    assert "It documents the flag our deployment relies on (marked 20" in md
    assert "the tool's verdict above is kept)" in md
    assert f"| {badge} (✍️ 🔴 High) |" in md
    assert md.count("✍️ Reader's correction") == 1


def test_a_correction_never_reaches_an_analysis_or_its_cache(
    repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLLM(lambda body, attempt: good(body)) as server:
        llm = {"llm_base_url": server.base_url, "llm_model": "m"}
        first = report(tmp_path, repo, **llm)
        sent = len(server.chat_requests)
        rows = analyses(tmp_path)
        assert cli(capsys, tmp_path, sha_of(first, "Fix the loader"), "--importance", "low",
                   "--reason", "only our CI saw it")[0] == 0  # fmt: skip
        again = report(tmp_path, repo, **llm)
        assert len(server.chat_requests) == sent, "the re-run is read from the cache"
        prompts = json.dumps([r.body for r in server.chat_requests])
    assert "only our CI saw it" not in prompts
    assert analyses(tmp_path) == rows, "no analysis was written or re-keyed"
    for title in TITLES:
        assert again["commits"][title]["analysis"] == first["commits"][title]["analysis"]
    assert again["commits"]["Fix the loader"]["correction"]["reason"] == "only our CI saw it"


def analyses(tmp_path: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(tmp_path / "home" / "repoherald.db") as conn:
        rows = conn.execute("SELECT sha, analyser, data FROM analyses ORDER BY sha, analyser")
        return [(str(a), str(b), str(c)) for a, b, c in rows.fetchall()]


def test_corrections_export_as_rows_the_benchmarks_read(
    repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    day = report(tmp_path, repo)
    docs, fix = sha_of(day, "Update the docs"), sha_of(day, "Fix the loader")
    assert cli(capsys, tmp_path, docs, "--importance", "high", "--type", "bugfix",
               "--reason", "documents a renamed flag")[0] == 0  # fmt: skip
    assert cli(capsys, tmp_path, fix, "--importance", "low", "--reason", "a test-only path")[0] == 0
    target = tmp_path / "labels.tsv"
    code, out, _ = cli(capsys, tmp_path, "--export", str(target))
    assert (code, out) == (0, f"2 correction(s) written to {target}\n")
    rows = {r.sha: r for r in load_gold(target)}
    assert set(rows) == {docs, fix}
    assert (rows[docs].repo, rows[docs].title, rows[docs].type, rows[docs].importance) == (
        "app", "Update the docs", "bugfix", "high",
    )  # fmt: skip
    assert rows[docs].committed == "2026-05-01T02:00:00+00:00"
    assert rows[docs].note == "documents a renamed flag"
    tool_type = day["commits"]["Fix the loader"]["analysis"]["change_type"]
    assert (rows[fix].type, rows[fix].importance) == (tool_type, "low"), "the tool's type is kept"


def test_a_rebuilt_store_keeps_the_corrections(
    repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    day = report(tmp_path, repo)
    assert cli(capsys, tmp_path, sha_of(day, "Add the parser"), "--importance", "low",
               "--reason", "behind a flag nobody sets")[0] == 0  # fmt: skip
    settings = build_settings(
        repos=(str(repo.path),), day=DAY, tz="UTC", lang="zh", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, name="app",
    )  # fmt: skip
    result = run(settings, rebuild=True)
    md = next(p for p in result.written if p.suffix == ".md").read_text("utf-8")
    assert "**✍️ 读者更正**：🟢 低：behind a flag nobody sets（20" in md


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("0000000", "--importance", "high", "--reason", "x"),
         "no reported commit starts with 0000000: report its day first"),
        (("{sha}", "--importance", "high", "--reason", "x", "--repo", "other"),
         "no reported commit of other starts with"),
        (("{sha}", "--importance", "high"), "mark needs a SHA, --importance and --reason"),
        (("{sha}", "--importance", "high", "--reason", "   "), "a correction needs a reason"),
        (("not-a-sha", "--importance", "high", "--reason", "x"), "is not a commit SHA"),
        (("{sha}", "--export", "x.tsv"), "--export writes every correction: give it alone"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line_and_exit_2(
    repo: GitFixture,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    message: str,
) -> None:
    sha = sha_of(report(tmp_path, repo), "Add the parser")
    code, out, err = cli(capsys, tmp_path, *(a.format(sha=sha) for a in args))
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("repoherald: error: ") and message in line


def test_a_commit_in_two_repositories_needs_the_repository(
    repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fork reported beside its upstream holds the same commits: the correction is one's."""
    fork = tmp_path / "fork"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(fork)], check=True)
    settings = build_settings(
        repos=(str(repo.path), str(fork)), day=DAY, tz="UTC", lang="en", cwd=tmp_path,
        out=str(tmp_path / "out"), home=str(tmp_path / "home"),
    )  # fmt: skip
    first = run(settings)
    twin = json.loads(next(p for p in first.written if p.suffix == ".json").read_text("utf-8"))
    names = [r["name"] for r in twin["repos"]]
    sha = twin["repos"][0]["commits"][0]["sha"]
    code, _, err = cli(capsys, tmp_path, sha[:8], "--importance", "high", "--reason", "ours")
    assert code == 2 and f"{sha[:8]} matches 2 reported commits" in err
    assert "give more of the SHA, or the repository with --repo" in err
    code, _, err = cli(
        capsys, tmp_path, sha[:8], "--importance", "high", "--reason", "ours", "--repo", names[1]
    )
    assert code == 0, err
    again = run(settings)
    twin = json.loads(next(p for p in again.written if p.suffix == ".json").read_text("utf-8"))
    shown = {r["name"]: r["commits"][0]["correction"] for r in twin["repos"]}
    assert shown[names[0]] is None and shown[names[1]]["reason"] == "ours"
