"""The real CLI against real repositories whose history is strange or hostile.

Every test builds a git repository with :mod:`tests.gitfixture`, runs
``python -m repoherald report`` for one day, and checks the written Markdown
and its JSON twin: each expected commit appears exactly once in the table and
once in the details, the stats line agrees, and nothing crashed.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from tests.gitfixture import GitFixture, run_git, run_repoherald

DAY = date(2025, 6, 10)
SHANGHAI = timezone(timedelta(hours=8))


def at(day: date, hh: int, mm: int = 0, ss: int = 0, tz: timezone = UTC) -> datetime:
    return datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=tz)


BEFORE = at(DAY - timedelta(days=1), 9)
"""A moment the day before the report day (in UTC and in Shanghai)."""

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")


# -- running and reading a report ------------------------------------------------


@dataclass
class Report:
    md: str
    data: dict[str, Any]
    stderr: str
    stdout: str
    md_path: Path
    json_path: Path

    @property
    def commits(self) -> list[dict[str, Any]]:
        return self.data["repos"][0]["commits"]

    @property
    def shas(self) -> list[str]:
        return [c["sha"] for c in self.commits]

    def commit(self, sha: str) -> dict[str, Any]:
        (found,) = [c for c in self.commits if c["sha"] == sha]
        return found

    def files(self, sha: str) -> list[dict[str, Any]]:
        return self.commit(sha)["facts"]["files"]

    @property
    def html(self) -> str:
        return MarkdownIt("commonmark").enable("table").render(self.md)

    def table_rows(self) -> list[str]:
        """The body rows of the commit table (after the ``|---|`` delimiter row)."""
        lines = self.md.splitlines()
        rows: list[str] = []
        for i, line in enumerate(lines):
            if line.startswith("|---"):
                j = i + 1
                while j < len(lines) and lines[j].startswith("|"):
                    rows.append(lines[j])
                    j += 1
        return rows


def report(
    repo: Path,
    tmp_path: Path,
    day: date | str = DAY,
    *extra: str,
    tz: str = "UTC",
    out: str = "out",
    home: str = "home",
    expect_ok: bool = True,
) -> Report:
    """Run ``repoherald report`` and read back the one day's .md and .json."""
    day_s = day if isinstance(day, str) else day.isoformat()
    proc = run_repoherald(
        "report",
        "--repo",
        str(repo),
        "--date",
        day_s,
        "--tz",
        tz,
        "--lang",
        "zh",
        "--out",
        str(tmp_path / out),
        "--home",
        str(tmp_path / home),
        *extra,
        cwd=tmp_path,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    if expect_ok:
        assert proc.returncode == 0, proc.stderr
    mds = sorted((tmp_path / out).rglob(f"{day_s}.md"))
    assert len(mds) == 1, (mds, proc.stderr)
    md_path = mds[0]
    json_path = md_path.with_suffix(".json")
    md = md_path.read_text(encoding="utf-8")
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert "Traceback" not in md
    assert str(md_path) in proc.stdout
    return Report(md, data, proc.stderr, proc.stdout, md_path, json_path)


def check_report(rep: Report, expected: list[str]) -> None:
    """Exactly ``expected`` commits, each once in the table and once in the details."""
    n = len(expected)
    assert sorted(rep.shas) == sorted(expected), (rep.shas, expected)
    assert len(rep.shas) == len(set(rep.shas))
    assert rep.data["repos"][0]["stats"]["commits"] == n
    assert rep.data["repos"][0]["error"] is None
    rows = rep.table_rows()
    assert len(rows) == n, rows
    lines = rep.md.splitlines()
    for sha in expected:
        short = sha[:7]
        assert rep.commit(sha)["short_sha"] == short
        in_rows = [r for r in rows if short in r]
        assert len(in_rows) == 1, (short, rows)
        sha_lines = [i for i, ln in enumerate(lines) if ln.startswith(f"**SHA**：`{short}`")]
        assert len(sha_lines) == 1, short
        i = sha_lines[0]
        assert lines[i - 1] == "" and lines[i - 2].startswith("#### "), lines[i - 3 : i + 1]
        # The table links to the heading's anchor, and that anchor is this commit's.
        anchor = rep.commit(sha)["anchor"]
        assert f"](#{anchor})" in in_rows[0]
    if n:
        assert f"本日共 {n} 个提交" in rep.md
        assert len(re.findall(r"本日共 \d+ 个提交", rep.md)) == 1
    else:
        assert "本日没有新的提交" in rep.md
        assert "本日共" not in rep.md
    html = rep.html
    tbody = re.findall(r"<tbody>(.*?)</tbody>", html, re.S)
    assert sum(body.count("<tr>") for body in tbody) == n
    assert html.count("<h4>") == n
    assert "Traceback" not in rep.stderr


def repo_at(tmp_path: Path, name: str = "proj") -> GitFixture:
    return GitFixture.init(tmp_path / name)


def base_commit(fx: GitFixture, when: datetime = BEFORE) -> str:
    fx.write("README.md", "# project\n")
    return fx.commit("Initial commit", when=when)


# -- encodings ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "title", "body"),
    [
        ("ISO-8859-1", "Corrige la façade: naïve résumé, Ærø, señor", "Détails: à bientôt ÿ"),
        ("GBK", "修复：中文提交信息的编码问题", "详细说明：这是用 GBK 编码写的正文。"),
    ],
)
def test_message_in_declared_encoding(tmp_path: Path, encoding: str, title: str, body: str) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.write("src/app.c", "int main(void) { return 0; }\n")
    raw_message = f"{title}\n\n{body}\n".encode(encoding)
    sha = fx.commit(raw_message, when=at(DAY, 10), encoding=encoding)
    raw = fx.cat(sha)
    assert f"encoding {encoding}".encode() in raw
    assert raw_message in raw  # git kept the bytes; nothing was re-encoded
    # git itself, asked for UTF-8, agrees on the text.
    assert fx.text("log", "-1", "--encoding=UTF-8", "--format=%s", sha) == title

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha])
    c = rep.commit(sha)
    assert c["title"] == title
    assert c["decode_errors"] is False
    assert title in rep.md
    assert "\ufffd" not in rep.md
    assert "无法按声明编码解码" not in rep.md


@pytest.mark.parametrize(
    ("message", "encoding"),
    [
        (b"Caf\xe9 au lait \xff\xfe broken\n\nbody \x80\x81 bytes\n", None),
        (b"Caf\xe9 declared utf-8 but latin-1\n", b"UTF-8"),
        (b"Caf\xe9 with unknown charset\n", b"x-no-such-charset"),
        (b"\xc3\x28 lone \xa0 bytes \xe2\x82\n", None),
        # Python codecs that are not text encodings fail with a bare UnicodeError.
        (b"Caf\xe9 undefined codec\n", b"undefined"),
        (b"Caf\xe9 punycode codec\n", b"punycode"),
    ],
    ids=[
        "no-header",
        "wrong-header",
        "unknown-charset",
        "invalid-utf8",
        "codec-undefined",
        "codec-punycode",
    ],
)
def test_undecodable_message(tmp_path: Path, message: bytes, encoding: bytes | None) -> None:
    fx = repo_at(tmp_path)
    base = base_commit(fx)
    # git commit would "fix" invalid UTF-8 by re-encoding it as Latin-1;
    # hash-object keeps the hostile bytes exactly.
    sha = fx.raw_commit(
        message, tree=fx.tree_of(base), parents=[base], when=at(DAY, 10), encoding=encoding
    )
    raw = fx.cat(sha)
    assert raw.endswith(message)
    assert (b"\nencoding " in raw) is (encoding is not None)

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha])
    c = rep.commit(sha)
    assert c["decode_errors"] is True
    assert "\ufffd" in c["title"]
    assert "Caf" in c["title"] or "lone" in c["title"]
    assert "提交信息含有无法按声明编码解码的字节" in rep.md


def test_empty_commit_message(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.write("notes.txt", "something\n")
    sha = fx.commit(b"", when=at(DAY, 10))
    assert fx.cat(sha).endswith(b"\n\n")  # really no message at all

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha])
    assert rep.commit(sha)["title"] == "（空提交信息）"
    assert "#### （空提交信息）" in rep.md


# -- unusual content -------------------------------------------------------------------


def test_binary_files(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64
    fx.write("assets/logo.png", png)
    fx.write("lib/blob.so", b"\x7fELF\x00\x00" + b"\x00\xff" * 5000)
    sha = fx.commit("Add binary assets", when=at(DAY, 10))
    png2 = png + b"\x00more"
    fx.write("assets/logo.png", png2)
    sha2 = fx.commit("Update logo", when=at(DAY, 11))

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha, sha2])
    files = {f["path"]: f for f in rep.files(sha)}
    assert set(files) == {"assets/logo.png", "lib/blob.so"}
    assert all(f["binary"] for f in files.values())
    assert files["assets/logo.png"]["size"] == len(png)
    assert files["lib/blob.so"]["size"] == 6 + 10000
    (changed,) = rep.files(sha2)
    assert changed["binary"] and changed["size"] == len(png2)
    assert changed["status"] == "modified"


def test_very_large_text_and_huge_python_file(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789\n"
    big_lines = 5 * 1024 * 1024 // len(line) + 1
    fx.write("data/big.txt", line * big_lines)
    py = "".join(
        f"def generated_{i}(a, b=1, *args, **kwargs):\n    return a + b\n\n" for i in range(60_000)
    )
    assert len(py) > 3_000_000
    fx.write("pkg/huge.py", py)
    sha = fx.commit("Add generated data and code", when=at(DAY, 10))

    started = time.monotonic()
    rep = report(fx.path, tmp_path)
    elapsed = time.monotonic() - started
    check_report(rep, [sha])
    files = {f["path"]: f for f in rep.files(sha)}
    assert files["data/big.txt"]["added"] == big_lines
    assert files["pkg/huge.py"]["added"] == 3 * 60_000
    facts = rep.commit(sha)["facts"]
    assert "pkg/huge.py" in facts["unparsed"]  # measured, not parsed
    assert not any(a["path"] == "pkg/huge.py" for a in facts["api_changes"])
    assert elapsed < 60, f"report took {elapsed:.1f}s"


def test_commit_touching_three_thousand_files(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.write_many({f"gen/d{i % 30:02d}/f{i:04d}.txt": f"file {i}\n" for i in range(3000)})
    sha = fx.commit("Generate 3000 files", when=at(DAY, 10))

    started = time.monotonic()
    rep = report(fx.path, tmp_path)
    elapsed = time.monotonic() - started
    check_report(rep, [sha])
    assert len(rep.files(sha)) == 3000
    assert rep.data["repos"][0]["stats"]["files_changed"] == 3000
    assert rep.data["repos"][0]["stats"]["added"] == 3000
    assert "3000 个文件" in rep.md
    assert elapsed < 60, f"report took {elapsed:.1f}s"


# -- graph shapes ----------------------------------------------------------------------


def test_merge_commit_on_first_parent_chain(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.checkout("side", create=True)
    fx.write("side1.txt", "one\n")
    s1 = fx.commit("Side work 1", when=at(DAY, 2))
    fx.write("side2.txt", "two\nlines\n")
    s2 = fx.commit("Side work 2", when=at(DAY, 3))
    fx.checkout("main")
    fx.write("main.txt", "main\n")
    b = fx.commit("Main work", when=at(DAY, 4))
    m = fx.merge("side", "Merge branch 'side'", when=at(DAY, 5))
    assert fx.text("rev-list", "--parents", "-n1", m).split()[1:] == [b, s2]

    rep = report(fx.path, tmp_path)
    check_report(rep, [m, b])
    assert s1 not in rep.shas and s2 not in rep.shas
    assert s1[:7] not in rep.md and s2[:7] not in rep.md
    merged = rep.commit(m)
    assert merged["facts"]["is_merge"] is True
    assert sorted(f["path"] for f in merged["facts"]["files"]) == ["side1.txt", "side2.txt"]
    assert merged["facts"]["added"] == 3
    assert "合并提交：改动按第一父提交计算。" in rep.md
    assert [f["path"] for f in rep.files(b)] == ["main.txt"]


def test_rename_records_old_path(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    body = "".join(f"line {i} of a file that is long enough to be similar\n" for i in range(50))
    fx.write("src/old_name.txt", body)
    fx.commit("Add file", when=BEFORE)
    fx.move("src/old_name.txt", "lib/new name ü.txt")
    sha = fx.commit("Move file", when=at(DAY, 10))

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha])
    (f,) = rep.files(sha)
    assert f["status"] == "renamed"
    assert f["path"] == "lib/new name ü.txt"
    assert f["old_path"] == "src/old_name.txt"
    assert f["added"] == 0 and f["deleted"] == 0


def test_mode_change_only(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    fx.write("tools/run.sh", "#!/bin/sh\necho hi\n")
    fx.commit("Add script", when=BEFORE)
    fx.chmod("tools/run.sh", executable=True)
    sha = fx.commit("Make script executable", when=at(DAY, 10))
    assert "old mode 100644" in fx.text("show", "--format=", sha)

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha])
    (f,) = rep.files(sha)
    assert f["path"] == "tools/run.sh"
    assert (f["old_mode"], f["new_mode"]) == ("100644", "100755")
    assert f["added"] == 0 and f["deleted"] == 0
    assert f["status"] == "modified"


def test_symlink_added(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    fx.write("real/config.py", "VALUE = 1\n")
    fx.commit("Add config", when=BEFORE)
    fx.symlink("config.py", "real/config.py")
    fx.symlink("escape", "../../../../etc/passwd")
    sha = fx.commit("Add links", when=at(DAY, 10))

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha])
    files = {f["path"]: f for f in rep.files(sha)}
    assert set(files) == {"config.py", "escape"}
    assert all(f["new_mode"] == "120000" and f["status"] == "added" for f in files.values())
    # A link named *.py is not Python source to parse.
    assert not rep.commit(sha)["facts"]["api_changes"]


def test_submodule_added(tmp_path: Path) -> None:
    sub = GitFixture.init(tmp_path / "sub")
    sub.write("lib.c", "int x;\n")
    sub_sha = sub.commit("sub init", when=BEFORE)
    sub.write("lib.c", "int y;\n")
    sub_sha2 = sub.commit("sub next", when=BEFORE)

    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.add_gitlink("vendor/sub", sub_sha)
    sha = fx.commit("Add submodule", when=at(DAY, 10))
    fx.git("update-index", "--cacheinfo", f"160000,{sub_sha2},vendor/sub")
    sha2 = fx.commit("Bump submodule", when=at(DAY, 11))
    assert f"160000 commit {sub_sha}\tvendor/sub" in fx.text("ls-tree", "-r", sha)

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha, sha2])
    files = {f["path"]: f for f in rep.files(sha)}
    assert set(files) == {".gitmodules", "vendor/sub"}
    gl = files["vendor/sub"]
    assert gl["new_mode"] == "160000" and gl["status"] == "added"
    assert gl["new_blob"] == sub_sha
    (bump,) = rep.files(sha2)
    assert bump["path"] == "vendor/sub" and bump["status"] == "modified"
    assert (bump["old_blob"], bump["new_blob"]) == (sub_sha, sub_sha2)


# -- days and windows ----------------------------------------------------------------


def test_day_without_commits(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx, when=at(DAY - timedelta(days=1), 23, 59, 59))
    fx.write("later.txt", "x\n")
    fx.commit("Next day", when=at(DAY + timedelta(days=1), 0, 0, 0))

    rep = report(fx.path, tmp_path)
    check_report(rep, [])
    assert rep.md.strip()
    assert rep.md.startswith("# 每日更新报告（2025-06-10）")
    assert rep.commits == []
    assert rep.data["repos"][0]["stats"]["commits"] == 0
    assert "0 commits" in rep.stderr


def test_repository_without_any_commit(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    rep = report(fx.path, tmp_path)
    check_report(rep, [])
    assert rep.commits == []
    assert "还没有任何提交" in rep.md
    assert "has no commits at all" in rep.stderr


def test_commit_inside_window_with_parent_dated_after_it(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.write("a.txt", "a\n")
    early = fx.commit("Early in the day", when=at(DAY, 8))
    fx.write("b.txt", "b\n")
    future = fx.commit("Dated in the future", when=at(DAY + timedelta(days=2), 10))
    fx.write("c.txt", "c\n")
    inside = fx.commit("Inside the window, after a future parent", when=at(DAY, 12))
    assert fx.rev("main") == inside

    rep = report(fx.path, tmp_path)
    check_report(rep, [inside, early])
    assert future not in rep.shas
    # The walk did not stop at the out-of-order parent, and the future commit
    # is reported on its own day.
    later = report(fx.path, tmp_path, DAY + timedelta(days=2))
    check_report(later, [future])


def test_window_uses_committer_date_table_shows_author_date(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx, when=at(DAY - timedelta(days=10), 9))
    fx.write("a.txt", "a\n")
    rebased = fx.commit(
        "Authored long ago, committed today",
        when=at(DAY - timedelta(days=5), 10, 11, 12),
        committed=at(DAY, 9),
    )
    fx.write("b.txt", "b\n")
    authored_today = fx.commit(
        "Authored today, committed tomorrow",
        when=at(DAY, 11),
        committed=at(DAY + timedelta(days=1), 1),
    )

    rep = report(fx.path, tmp_path)
    check_report(rep, [rebased])
    assert authored_today not in rep.shas
    (row,) = rep.table_rows()
    assert "2025-06-05 10:11:12" in row
    c = rep.commit(rebased)
    assert c["author_time"] == "2025-06-05T10:11:12+00:00"
    assert c["commit_time"] == "2025-06-10T09:00:00+00:00"

    tomorrow = report(fx.path, tmp_path, DAY + timedelta(days=1))
    check_report(tomorrow, [authored_today])


def test_window_boundaries_in_report_time_zone(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx, when=at(DAY - timedelta(days=3), 9))
    utc = UTC
    stamps = {
        "c0": datetime(2025, 6, 9, 15, 59, 59, tzinfo=utc),  # 06-09 23:59:59 +08
        "c1": datetime(2025, 6, 9, 16, 0, 0, tzinfo=utc),  # 06-10 00:00:00 +08
        # 06-10 23:59:59 +08, recorded with a -10:00 offset: the report's zone wins.
        "c2": datetime(2025, 6, 10, 15, 59, 59, tzinfo=utc).astimezone(
            timezone(timedelta(hours=-10))
        ),
        "c3": datetime(2025, 6, 10, 16, 0, 0, tzinfo=utc),  # 06-11 00:00:00 +08
    }
    sha = {}
    for name, when in stamps.items():
        fx.write(f"{name}.txt", name)
        sha[name] = fx.commit(f"Commit {name}", when=when)
    assert b" -1000\n" in fx.cat(sha["c2"])

    rep = report(fx.path, tmp_path, tz="Asia/Shanghai")
    check_report(rep, [sha["c1"], sha["c2"]])
    times = {sha[n][:7]: r for n in ("c1", "c2") for r in rep.table_rows() if sha[n][:7] in r}
    assert "2025-06-10 00:00:00" in times[sha["c1"][:7]]
    assert "2025-06-10 23:59:59" in times[sha["c2"][:7]]
    assert rep.data["window"] == {
        "start": "2025-06-10T00:00:00+08:00",
        "end": "2025-06-11T00:00:00+08:00",
    }
    check_report(report(fx.path, tmp_path, "2025-06-09", tz="Asia/Shanghai"), [sha["c0"]])
    check_report(report(fx.path, tmp_path, "2025-06-11", tz="Asia/Shanghai"), [sha["c3"]])
    # The same instants seen from UTC fall on other days.
    check_report(
        report(fx.path, tmp_path, "2025-06-10", tz="UTC", out="out-utc"), [sha["c2"], sha["c3"]]
    )


def test_bare_repository(tmp_path: Path) -> None:
    fx = repo_at(tmp_path, "src")
    base_commit(fx)
    fx.write("x.py", "def x():\n    pass\n")
    sha = fx.commit("feat: add x", when=at(DAY, 10))
    bare = tmp_path / "proj.git"
    run_git(tmp_path, "clone", "--quiet", "--bare", str(fx.path), str(bare))
    assert not (bare / ".git").exists() and (bare / "HEAD").is_file()

    rep = report(bare, tmp_path)
    check_report(rep, [sha])
    assert rep.data["repos"][0]["name"] == "proj"
    assert rep.data["repos"][0]["branch"] == "main"


def test_bare_repository_built_from_plumbing(tmp_path: Path) -> None:
    fx = GitFixture.init(tmp_path / "plumb.git", bare=True)
    blob = fx.hash_blob("hello\n")
    t1 = fx.mktree([("100644", "hello.txt", blob)])
    c1 = fx.raw_commit(b"first\n", tree=t1, when=BEFORE, update_ref="refs/heads/main")
    t2 = fx.mktree([("100644", "hello.txt", blob), ("100755", "run", fx.hash_blob("#!/bin/sh\n"))])
    c2 = fx.raw_commit(
        b"second\n", tree=t2, parents=[c1], when=at(DAY, 10), update_ref="refs/heads/main"
    )

    rep = report(fx.path, tmp_path)
    check_report(rep, [c2])
    (f,) = rep.files(c2)
    assert f["path"] == "run" and f["new_mode"] == "100755"


def test_bare_repository_whose_head_names_an_unborn_branch(tmp_path: Path) -> None:
    """``git init --bare`` said master, only main was pushed: report main, not fail."""
    src = repo_at(tmp_path, "src")
    base_commit(src)
    src.write("x.txt", "x\n")
    sha = src.commit("Pushed to main", when=at(DAY, 10))
    bare = GitFixture.init(tmp_path / "server.git", bare=True, branch="master")
    src.git("push", "--quiet", str(bare.path), "main:main")
    assert bare.text("symbolic-ref", "HEAD") == "refs/heads/master"
    assert bare.git("rev-parse", "--verify", "--quiet", "master", check=False) == b""

    rep = report(bare.path, tmp_path)
    check_report(rep, [sha])
    assert rep.data["repos"][0]["branch"] == "main"


def test_clone_url_source(tmp_path: Path) -> None:
    """A ``file://`` URL goes through the shallow mirror path; a second run fetches."""
    fx = repo_at(tmp_path)
    for i in range(5):
        fx.write(f"old{i}.txt", f"{i}\n")
        fx.commit(f"Old {i}", when=at(DAY - timedelta(days=30 - i), 9))
    fx.write("a.txt", "a\n")
    first = fx.commit("First today", when=at(DAY, 9))
    url = fx.path.as_uri()

    rep = report(url, tmp_path)  # type: ignore[arg-type]
    check_report(rep, [first])
    (f,) = rep.files(first)
    assert f["path"] == "a.txt" and f["status"] == "added"  # diffed against its real parent

    fx.write("b.txt", "b\n")
    second = fx.commit("Second today", when=at(DAY, 10))
    again = report(url, tmp_path)  # type: ignore[arg-type]
    check_report(again, [first, second])
    assert "1 analysed" in again.stderr


def test_root_and_empty_commits_in_window(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    fx.write("a.txt", "a\n")
    root = fx.commit("Root commit on the day", when=at(DAY, 8))
    empty = fx.commit("Empty commit", when=at(DAY, 9))
    fx.write("b.txt", "b\n")
    after = fx.commit("After the empty one", when=at(DAY, 10))
    orphan = GitFixture.init(tmp_path / "orphan")
    empty_root = orphan.raw_commit(b"Root with the empty tree\n", when=at(DAY, 8))

    rep = report(fx.path, tmp_path)
    check_report(rep, [root, empty, after])
    assert [f["path"] for f in rep.files(root)] == ["a.txt"]
    assert rep.files(empty) == []
    assert [f["path"] for f in rep.files(after)] == ["b.txt"]
    check_report(report(orphan.path, tmp_path, out="out2"), [empty_root])


HOSTILE_PATHS = [
    ":colon",
    "new\nline",
    "tab\there",
    "1\t2\t3",
    "a" * 40,
    "0" * 40,
    " lead space",
    "-dash",
    "\\back",
    '"quoted"',
    "ünï/cödé.py",
    "#hash|pipe`tick`<b>.md",
    "docs/[x](javascript:alert(1)).md",
]


def test_hostile_paths(tmp_path: Path) -> None:
    """Paths are NUL-separated data: none of them may shift the diff parser."""
    fx = repo_at(tmp_path)
    base_commit(fx)
    blob = fx.hash_blob("content\n")
    names = [p.encode("utf-8") for p in HOSTILE_PATHS] + [b"bad\xffname"]
    # -z: NUL-terminated entries, so no name is unquoted or split.
    entries = b"".join(f"100644 {blob}\t".encode() + n + b"\0" for n in names)
    fx.git("update-index", "--add", "-z", "--index-info", input=entries)
    added = fx.commit("Add files with hostile names", when=at(DAY, 9))
    big = "".join(f"line {i} long enough to be recognised as the same file\n" for i in range(40))
    fx.write("tab\tsrc.txt", big)
    fx.write("plain.txt", "plain\n")
    fx.commit("More files", when=at(DAY, 10))
    fx.move("tab\tsrc.txt", ":dst\nname.txt")
    fx.write("plain.txt", "plain\nchanged\n")
    moved = fx.commit("Rename with hostile names", when=at(DAY, 11))

    rep = report(fx.path, tmp_path)
    paths = sorted(f["path"] for f in rep.files(added))
    assert paths == sorted([*HOSTILE_PATHS, "bad\ufffdname"])
    assert all(f["added"] == 1 and f["status"] == "added" for f in rep.files(added))
    files = {f["path"]: f for f in rep.files(moved)}
    assert set(files) == {":dst\nname.txt", "plain.txt"}
    assert files[":dst\nname.txt"]["old_path"] == "tab\tsrc.txt"
    assert files[":dst\nname.txt"]["status"] == "renamed"
    assert (files["plain.txt"]["added"], files["plain.txt"]["deleted"]) == (1, 0)
    assert len(rep.shas) == 3
    html = rep.html
    assert 'href="javascript:' not in html and "<b>" not in html


# -- hostile text --------------------------------------------------------------------

HOSTILE_TITLE = (
    "# Title | with pipes `code` <script>alert(1)</script> "
    "[x](javascript:alert(1)) @someone ![img](http://x/y.png)"
)


def test_hostile_commit_title(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.write("src/evil.py", "def evil():\n    pass\n")
    message = (
        f"{HOSTILE_TITLE}\n\n"
        "A body with <img src=x onerror=alert(1)> and | pipes |\n"
        "and [another](javascript:alert(2)) link, mail me at evil@example.com.\n\n"
        "Signed-off-by: Evil <evil@example.com>\n"
        "Co-authored-by: Other Evil <other.evil@example.org>\n"
    )
    sha = fx.commit(
        message,
        when=at(DAY, 10),
        author=("Mallory | <b>bold</b> `x`", "mallory@example.com"),
    )
    fx.write("b.txt", "benign\n")
    benign = fx.commit("A benign commit", when=at(DAY, 11))

    rep = report(fx.path, tmp_path)
    check_report(rep, [sha, benign])
    md, js = rep.md, rep.json_path.read_text(encoding="utf-8")

    # No e-mail address anywhere, in either file.
    assert not EMAIL.search(md), EMAIL.search(md)
    assert not EMAIL.search(js), EMAIL.search(js)
    # No live markup in the Markdown source...
    assert not re.search(r"(?<!\\)<script", md)
    assert not re.search(r"(?<!\\)<img", md)
    assert not re.search(r"(?<!\\)\]\(javascript:", md)
    assert "@someone" not in md
    # ...nor in what a CommonMark renderer makes of it.
    html = rep.html
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()
    assert 'href="javascript:' not in html.lower()
    assert "<b>" not in html
    # The hostile title did not open a heading of its own or split the table.
    assert html.count("<h1>") == 1
    rows = rep.table_rows()
    assert len(rows) == 2
    tbody = re.search(r"<tbody>(.*?)</tbody>", html, re.S)
    assert tbody is not None
    for tr in re.findall(r"<tr>(.*?)</tr>", tbody.group(1), re.S):
        assert tr.count("<td>") == 5
    # The JSON twin keeps the title as plain text.
    assert rep.commit(sha)["title"] == HOSTILE_TITLE
    assert rep.commit(sha)["author"].startswith("Mallory")


# -- determinism -----------------------------------------------------------------------


def test_second_run_is_identical_and_cached(tmp_path: Path) -> None:
    fx = repo_at(tmp_path)
    base_commit(fx)
    fx.write("src/core.py", "def api(a):\n    return a\n")
    c1 = fx.commit("feat(core): add api (#12)", when=at(DAY, 9))
    fx.write("src/core.py", "def api(a, b):\n    return a\n")
    c2 = fx.commit(HOSTILE_TITLE, when=at(DAY, 10))
    fx.write("requirements.txt", "requests==2.31.0\n")
    c3 = fx.commit("修复：依赖更新", when=at(DAY, 11))

    first = report(fx.path, tmp_path)
    check_report(first, [c1, c2, c3])
    assert "3 analysed" in first.stderr
    md1 = first.md_path.read_bytes()
    js1 = first.json_path.read_bytes()

    second = report(fx.path, tmp_path)
    check_report(second, [c1, c2, c3])
    assert "0 analysed" in second.stderr
    assert "3 from cache" in second.stderr
    md2 = second.md_path.read_bytes()
    js2 = second.json_path.read_bytes()

    def strip_generated(md: bytes) -> list[bytes]:
        lines = md.split(b"\n")
        gen = [ln for ln in lines if ln.startswith("> 生成时间：".encode())]
        assert len(gen) == 1
        return [ln for ln in lines if not ln.startswith("> 生成时间：".encode())]

    assert strip_generated(md1) == strip_generated(md2)
    d1, d2 = json.loads(js1), json.loads(js2)
    assert "generated_at" in d1
    d1.pop("generated_at")
    d2.pop("generated_at")
    assert d1 == d2
    # Byte-identical apart from that one value.
    gen = re.compile(rb'"generated_at": ?"[^"]*"')
    assert gen.sub(b"", js1) == gen.sub(b"", js2)
    assert not list(first.md_path.parent.glob(".*.tmp"))
