"""The archive publisher on a real file system: modes, names, identities, the index, kills."""

from __future__ import annotations

import itertools
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from repoherald.errors import PublishError
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    DayReport,
    Entry,
    Facts,
    Importance,
    Person,
    RepoSection,
)
from repoherald.publish import registry
from repoherald.publish.archive.atomic import STALE_AFTER, is_temp_name, sweep_stale
from repoherald.publish.archive.publisher import ArchiveOptions, ArchivePublisher
from repoherald.publish.base import Publication, Status, join_identities
from repoherald.render.markdown import stamp_line

DAY = date(2026, 8, 20)
ROOT = Path(__file__).parents[2]


Repo = tuple[str, str, int, int]
"""(name, identity, commits, of which high)."""


def entries(n: int, high: int, day: date) -> tuple[Entry, ...]:
    """``n`` commits, ``high`` of them of high importance."""
    ts = int(datetime(day.year, day.month, day.day, 9, tzinfo=UTC).timestamp())
    who = Person("Ann", "ann@example.com")
    facts = Facts(
        files=(), added=0, deleted=0, areas=(), pr_number=None, tags=(), conventional_type=None,
        conventional_scope=None, breaking_marker=False, is_revert=False, reverted_sha=None,
        co_authors=(), kinds={}, api_changes=(), dependency_changes=(),
    )  # fmt: skip
    return tuple(
        Entry(
            Commit(f"{i:040x}", (), who, ts, 0, who, ts, 0, f"change {i}"),
            facts,
            Analysis(
                "rules/1",
                ChangeType.OTHER,
                Importance.HIGH if i < high else Importance.LOW,
                (),
                f"summary {i}",
            ),
        )
        for i in range(n)
    )


_CLOCK = itertools.count()
"""Seconds after the first report was generated: each report is generated later."""


def twin(
    day: date,
    repos: list[Repo],
    lang: str = "zh",
    pad: int = 0,
    error: str | None = None,
    generated_at: datetime = datetime(2026, 8, 21, 2, tzinfo=UTC),
) -> str:
    """A JSON twin with the fields the archive and the index read."""
    data = {
        "schema_version": 1,
        "date": day.isoformat(),
        "lang": lang,
        "generated_at": generated_at.isoformat(timespec="seconds"),
        "repos": [
            {
                "name": name,
                "source_id": ident,
                "error": error,
                "stats": {"commits": n, "importance": {"high": high, "medium": 0, "low": n - high}},
            }
            for name, ident, n, high in repos
        ],
        "pad": "x" * pad,
    }
    return json.dumps(data, ensure_ascii=False) + "\n"


def combined(
    name: str,
    repos: list[Repo],
    day: date = DAY,
    lang: str = "zh",
    body: str = "body",
    pad: int = 0,
    error: str | None = None,
) -> Publication:
    """A publication whose report, Markdown and twin agree (as the pipeline's do)."""
    now = datetime(2026, 8, 21, 2, tzinfo=UTC)
    sections = tuple(
        RepoSection(n, "main", None, entries(c, h, day), error, ident) for n, ident, c, h in repos
    )
    report = DayReport(day, "UTC", now, now, lang, sections, ("rules/1",), now, "0")
    at = now + timedelta(seconds=next(_CLOCK))
    md = f"# {name} {day}\n\n{stamp_line(lang, at)}\n\n{body}\n"
    js = twin(day, repos, lang, pad, error, at)
    ident = join_identities([r[1] for r in repos])
    return Publication(name, ident, day, lang, md, js, report)


def item(
    name: str = "proj",
    ident: str = "/src/proj",
    day: date = DAY,
    lang: str = "zh",
    commits: int = 3,
    high: int = 1,
    body: str = "body",
) -> Publication:
    return combined(name, [(name, ident, commits, high)], day, lang, body)


@pytest.fixture
def archive(tmp_path: Path) -> ArchivePublisher:
    target = registry.create({"type": "archive", "out": tmp_path / "reports"})
    assert isinstance(target.publisher, ArchivePublisher)
    return target.publisher


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if is_temp_name(p.name)]


# -- permissions ------------------------------------------------------------------------


def test_new_reports_follow_the_umask(archive: ArchivePublisher, umask: None) -> None:
    paths = archive.publish(item()).paths
    out = archive.options.out
    assert [mode(p) for p in paths] == [0o644, 0o644]
    assert mode(out / "index.md") == mode(out / "index.json") == 0o644
    os.umask(0o077)
    again = archive.publish(item(body="changed")).paths
    assert [mode(p) for p in again] == [0o600, 0o600], "a private umask is honoured too"


def test_an_existing_0644_report_stays_0644_and_0600_is_not_forced(
    archive: ArchivePublisher, umask: None
) -> None:
    md, js = archive.publish(item()).paths
    md.chmod(0o644)
    js.chmod(0o644)
    archive.publish(item(body="second run"))
    assert (mode(md), mode(js)) == (0o644, 0o644)
    md.chmod(0o600)  # as written by the old mkstemp-based writer
    js.chmod(0o600)
    archive.publish(item(body="third run"))
    assert (mode(md), mode(js)) == (0o644, 0o644)
    assert "third run" in md.read_text(encoding="utf-8")


# -- names ------------------------------------------------------------------------------


@pytest.mark.parametrize("template", ["{year}/{name}/{date}", "{year}/{date}-{name}"])
def test_repositories_differing_after_a_dot_get_different_files(
    tmp_path: Path, template: str
) -> None:
    out = tmp_path / "reports"
    target = registry.create({"type": "archive", "out": out, "path": template})
    names = ["vue.js", "vue.ts", "r.omni", "r.ascend"]
    written = [target.publisher.publish(item(n, f"/src/{n}", body=n)).paths for n in names]
    mds = [md for md, _ in written]
    assert len(set(mds)) == 4
    for n, (md, js) in zip(names, written, strict=True):
        assert md.read_text(encoding="utf-8").endswith(f"{n}\n")
        assert json.loads(js.read_text(encoding="utf-8"))["repos"][0]["name"] == n
    assert sorted(p.name for p in out.rglob("*.md") if p.name != "index.md") == sorted(
        md.name for md in mds
    )


def test_english_gets_its_own_file_beside_chinese(archive: ArchivePublisher) -> None:
    zh_md, _ = archive.publish(item(lang="zh", body="中文")).paths
    en_md, en_js = archive.publish(item(lang="en", body="English")).paths
    assert zh_md.name == "2026-08-20.md"
    assert (en_md.name, en_js.name) == ("2026-08-20.en.md", "2026-08-20.en.json")
    assert zh_md.read_text(encoding="utf-8").endswith("中文\n")
    assert en_md.read_text(encoding="utf-8").endswith("English\n")


# -- identity ---------------------------------------------------------------------------


def test_another_repository_with_the_same_name_is_refused_and_nothing_is_written(
    archive: ArchivePublisher,
) -> None:
    archive.publish(item(ident="/home/a/proj"))
    out = archive.options.out
    before = snapshot(out)
    with pytest.raises(PublishError) as err:
        archive.publish(item(ident="/home/b/proj", body="other"))
    msg = str(err.value)
    assert "2026/proj/2026-08-20.json" in msg and "/home/a/proj" in msg and "/home/b/proj" in msg
    assert "set `name` for one of them" in msg and "\n" not in msg
    assert snapshot(out) == before
    assert temps(out) == []


def test_the_same_repository_under_another_url_form_is_not_a_clash(
    archive: ArchivePublisher,
) -> None:
    archive.publish(item(ident="https://github.com/org/proj"))
    delivery = archive.publish(item(ident="ssh://git@github.com/org/proj.git", body="new"))
    assert delivery.status is Status.SENT


def test_an_old_twin_without_identity_is_replaced(archive: ArchivePublisher) -> None:
    md, js = archive.paths(item())
    js.parent.mkdir(parents=True)
    js.write_text('{"repos":[{"name":"proj"}]}\n', encoding="utf-8")
    md.write_text("old\n", encoding="utf-8")
    archive.publish(item(body="new"))
    assert md.read_text(encoding="utf-8").endswith("new\n")


def test_without_name_in_the_template_the_advice_is_to_add_it(tmp_path: Path) -> None:
    target = registry.create({"type": "archive", "out": tmp_path, "path": "{year}/{date}"})
    target.publisher.publish(item("a", "/src/a"))
    with pytest.raises(PublishError, match=r"add \{name\} to the path template"):
        target.publisher.publish(item("b", "/src/b"))


def test_a_combined_report_is_identified_by_all_its_repositories(
    archive: ArchivePublisher,
) -> None:
    ids = ["/src/a", "/src/b"]
    both = combined("stack", [("a", ids[0], 1, 0), ("b", ids[1], 2, 1)])
    archive.publish(both)
    assert archive.publish(both).status is Status.UNCHANGED
    with pytest.raises(PublishError):
        archive.publish(item("stack", "/src/a"))


# -- re-runs and failures ---------------------------------------------------------------


def test_a_rerun_of_an_unchanged_day_is_unchanged(archive: ArchivePublisher) -> None:
    first = archive.publish(item())
    written = [p.read_bytes() for p in first.paths]
    later = item()
    assert later.markdown != first.paths[0].read_text(encoding="utf-8")  # a later "generated"
    again = archive.publish(later)
    assert [p.read_bytes() for p in again.paths] == written, "unchanged files are not rewritten"
    changed = archive.publish(item(body="a commit was re-analysed"))
    assert b"re-analysed" in changed.paths[0].read_bytes()
    assert (first.status, again.status, changed.status) == (
        Status.SENT,
        Status.UNCHANGED,
        Status.SENT,
    )
    assert first.content_hash == again.content_hash != changed.content_hash
    assert first.remote_id == "2026/proj/2026-08-20.md"


def test_a_failed_rename_leaves_no_half_pair(archive: ArchivePublisher) -> None:
    md, js = archive.paths(item())
    md.mkdir(parents=True)  # a directory where the report should go
    with pytest.raises(PublishError) as err:
        archive.publish(item())
    assert str(md) in str(err.value)
    assert not js.exists(), "the .json renamed first is taken back"
    assert temps(archive.options.out) == []


def test_stale_temp_files_are_swept_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    dead_pid = int(dead.stdout)
    killed = tmp_path / f".2026-08-20.md.repoherald-tmp-{dead_pid}-0a1b2c3d"
    mine = tmp_path / f".2026-08-20.json.repoherald-tmp-{os.getpid()}-deadbeef"
    old = tmp_path / f".2026-08-19.md.repoherald-tmp-{os.getpid()}-01234567"
    foreign = tmp_path / ".2026-08-20.md.swp"
    for p in (killed, mine, old, foreign):
        p.write_text("partial", encoding="utf-8")
    long_ago = datetime.now().timestamp() - STALE_AFTER - 60
    os.utime(old, (long_ago, long_ago))
    removed = sweep_stale(tmp_path)
    assert sorted(removed) == sorted([killed, old])
    assert mine.exists() and foreign.exists()


# -- the index --------------------------------------------------------------------------


def index_links(index_md: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(index_md)
    return [
        unquote(str(child.attrs["href"]))
        for tok in tokens
        if tok.type == "inline"
        for child in tok.children or []
        if child.type == "link_open"
    ]


def test_index_lists_every_report_newest_first_with_working_links(
    archive: ArchivePublisher,
) -> None:
    out = archive.options.out
    days = [DAY - timedelta(days=n) for n in (3, 0, 5, 1)]
    for i, d in enumerate(days):
        archive.publish(item("vue.js", "/src/vue.js", d, commits=i + 1, high=i % 2))
        archive.publish(item("r.omni", "/src/r.omni", d, commits=10 + i, high=1))
    archive.publish(item("vue.js", "/src/vue.js", DAY, lang="en", commits=1, high=1))
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert len(index) == 9
    dates = [e["date"] for e in index]
    assert dates == sorted(dates, reverse=True)
    first = next(e for e in index if e["repos"] == ["vue.js"] and e["date"] == str(days[0]))
    assert (first["commits"], first["high"]) == (1, 0)

    md = (out / "index.md").read_text(encoding="utf-8")
    links = index_links(md)
    reports = [link for link in links if link.endswith(".md")]
    assert len(reports) == 9 and len(links) == 18
    for link in links:
        assert not link.startswith(("/", "http")), link
        assert (out / link).is_file(), link
    linked_days = [Path(link).name[:10] for link in reports]
    assert linked_days == sorted(linked_days, reverse=True)
    row = next(ln for ln in md.splitlines() if "vue.js/2026-08-17.md" in ln)
    assert "| 1 | 0 |" in row

    # Deleted reports leave the index at the next write; so does a half pair.
    gone_md, gone_js = archive.paths(item("r.omni", "/src/r.omni", days[2]))
    gone_md.unlink()
    gone_js.unlink()
    half_md, _ = archive.paths(item("vue.js", "/src/vue.js", days[3]))
    half_md.unlink()
    archive.publish(item("new", "/src/new", DAY))
    links = index_links((out / "index.md").read_text(encoding="utf-8"))
    assert all((out / link).is_file() for link in links)
    assert len([link for link in links if link.endswith(".md")]) == 8


def test_a_batch_lands_every_pair_in_order_and_the_index_on_leaving(
    archive: ArchivePublisher,
) -> None:
    out = archive.options.out
    days = [DAY - timedelta(days=n) for n in range(4)]
    landed: list[date] = []
    archive.publish(item(day=days[3]))  # outside a batch: written at once, index too
    assert (out / "index.json").is_file()
    with archive.batch():
        for d in days:
            archive.publish(item(day=d), landed=lambda d=d: landed.append(d))
        index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
        assert [e["date"] for e in index] == [str(days[3])], "the index waits for the batch"
    assert landed == days, "each pair's callback, in the order published"
    for d in days:
        md, js = archive.paths(item(day=d))
        assert md.read_text(encoding="utf-8").startswith(f"# proj {d}") and js.is_file()
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert [e["date"] for e in index] == [d.isoformat() for d in days]
    assert len(index_links((out / "index.md").read_text(encoding="utf-8"))) == 8
    assert temps(out) == []


def test_a_failed_write_in_a_batch_is_raised_and_stops_the_later_ones(
    archive: ArchivePublisher,
) -> None:
    out = archive.options.out
    first, failing, after = (DAY - timedelta(days=n) for n in (2, 1, 0))
    blocked, blocked_js = archive.paths(item(day=failing))
    blocked.mkdir(parents=True)  # a directory where that day's report should go
    landed: list[date] = []
    with pytest.raises(PublishError) as err, archive.batch():
        for d in (first, failing, after):
            archive.publish(item(day=d), landed=lambda d=d: landed.append(d))
    assert str(blocked) in str(err.value), "the failed write is the error raised"
    assert landed == [first], "no callback for the pair that failed, nor for later ones"
    assert not blocked_js.exists(), "no half pair"
    assert not archive.paths(item(day=after))[1].exists(), "nothing written after a failure"
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert [e["date"] for e in index] == [str(first)], "the index lists what landed"
    assert temps(out) == []


def test_index_of_a_report_that_failed_to_read_says_so(archive: ArchivePublisher) -> None:
    archive.publish(combined("proj", [("proj", "/src/proj", 0, 0)], error="cannot clone"))
    md = (archive.options.out / "index.md").read_text(encoding="utf-8")
    assert "❌" in md


# -- kill -9 ----------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import os, sys, time
    from datetime import date, timedelta
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from tests.integration.test_archive import combined
    from repoherald.publish.archive.publisher import ArchiveOptions, ArchivePublisher

    # Pause point: "replace:1" stops right after the first rename of a publish, and so on.
    # The file system calls themselves are real; the pause only lets the test kill the
    # writer at a known step. "none" runs freely.
    what, _, nth = sys.argv[3].partition(":")
    calls = {"fsync": 0, "replace": 0}
    armed = False

    def pausing(name, real):
        def call(*args):
            result = real(*args)
            if armed:
                calls[name] += 1
                if what == name and calls[name] == int(nth):
                    print("paused", flush=True)
                    time.sleep(3600)
            return result
        return call

    os.fsync = pausing("fsync", os.fsync)
    os.replace = pausing("replace", os.replace)
    archive = ArchivePublisher(ArchiveOptions(out=Path(sys.argv[1])))
    n = 0
    while True:
        day = date(2026, 8, 20) - timedelta(days=n % 3)
        big = combined("proj", [("proj", "/src/proj", n % 7 + 1, 0)], day,
                       body="run " * 20000, pad=300_000)
        archive.publish(big)
        if n == 0:
            print("ready", flush=True)
            armed = True
        n += 1
    """
)

# fsync 2: both temp files are written, nothing renamed; replace 1: the .json is in place and
# the .md not yet; replace 2: the pair is in place, the index not; fsync 4: an index temp
# file is written; none: wherever the free-running writer happens to be.
KILL_POINTS = ["fsync:2", "replace:1", "replace:2", "fsync:4", "none"]


def pair_invariant(out: Path) -> None:
    """Every .md has its complete .json twin."""
    for md in out.rglob("*.md"):
        twin_path = md.with_name(md.name[: -len(".md")] + ".json")
        assert twin_path.is_file(), f"{md} has no .json"
        json.loads(twin_path.read_text(encoding="utf-8"))


def test_kill_9_while_writing_leaves_pairs_and_the_next_run_no_temp_files(
    tmp_path: Path,
) -> None:
    """One writer per kill point, run side by side (each starts a Python process)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path / str(i)), str(ROOT), point],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i, point in enumerate(KILL_POINTS)
    ]
    try:
        for point, proc in zip(KILL_POINTS, procs, strict=True):
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", point
            if point != "none":
                assert proc.stdout.readline().strip() == "paused", point
    finally:
        for proc in procs:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    for i, point in enumerate(KILL_POINTS):
        check_after_kill(tmp_path / str(i), point)


def check_after_kill(out: Path, point: str) -> None:
    pair_invariant(out)
    if point in ("fsync:2", "replace:1", "fsync:4"):
        assert temps(out), f"{point}: the kill left a temporary file for the next run to remove"
    archive = ArchivePublisher(registry.get("archive").Options.model_validate({"out": out}))
    for n in range(3):
        archive.publish(item(day=DAY - timedelta(days=n)))
    assert temps(out) == [], point
    assert not [p for p in out.rglob("*") if p.name.startswith(".")], point
    pair_invariant(out)
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert [e["date"] for e in index] == [str(DAY - timedelta(days=n)) for n in range(3)], point


def test_index_survives_a_damaged_index_and_rereads_changed_twins(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    first = ArchivePublisher(ArchiveOptions(out=out))
    first.publish(item(day=DAY - timedelta(days=1), commits=2))
    first.publish(item(day=DAY - timedelta(days=2), commits=5))
    (out / "index.json").write_text("{garbage", encoding="utf-8")
    # Another machine rewrote one twin (e.g. pulled from git): a new size, new counts.
    _, js = first.paths(item(day=DAY - timedelta(days=2)))
    js.write_text(twin(DAY - timedelta(days=2), [("proj", "/src/proj", 12, 4)]), encoding="utf-8")
    second = ArchivePublisher(ArchiveOptions(out=out))
    second.publish(item(day=DAY, commits=1))
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert [(e["date"], e["commits"], e["high"]) for e in index] == [
        (str(DAY), 1, 1),
        (str(DAY - timedelta(days=1)), 2, 1),
        (str(DAY - timedelta(days=2)), 12, 4),
    ]
