"""Parsed Python blobs kept in the store: exact round trips, and a daily run that parses less.

The codec is checked on every Python blob of the gold set (real history of
several repositories): a decoded entry equals the parsed one, and deriving
the next version from a decoded outline gives what deriving from the parsed
one gives. The pipeline is checked on a fixture repository run one day per
process, as a deployment runs it.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bench import goldset
from repoherald import pipeline
from repoherald.analysis.pyapi import blobs as blobapi
from repoherald.analysis.pyapi import codec as apicodec
from repoherald.analysis.pyapi import outline as pyoutline
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.config import build_settings
from repoherald.models import Facts
from repoherald.pipeline.analyse import API_CODEC, analyse_day, keep_parses
from repoherald.pipeline.events import Emitter
from repoherald.pipeline.identity import identify
from repoherald.pipeline.run import _prepare
from repoherald.store import blobapis
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture


def roundtrip(entry: apicodec.Entry) -> apicodec.Entry:
    """Through the codec and through JSON text, as the store keeps it."""
    text = json.dumps(apicodec.encode(entry), ensure_ascii=False, separators=(",", ":"))
    return apicodec.decode(json.loads(text))


@pytest.fixture(scope="module")
def gold() -> tuple[list[goldset.CommitInputs], dict[str, bytes]]:
    return goldset.load_cache()


def test_every_gold_blob_round_trips_exactly(
    gold: tuple[list[goldset.CommitInputs], dict[str, bytes]],
) -> None:
    inputs, blobs = gold
    python = {
        oid
        for i in inputs
        for f in i.files
        if f.path.endswith((".py", ".pyi"))
        for oid in (f.old_blob, f.new_blob)
        if oid in blobs
    }
    kinds: Counter[str] = Counter()
    for oid in python:
        parsed = pyoutline.parse(blobs[oid], max_bytes=blobapi.MAX_PARSE_BYTES)
        entry: apicodec.Entry = parsed if parsed is not None else (None, None)
        kinds["outline" if entry[1] else "api" if entry[0] is not None else "failed"] += 1
        assert roundtrip(entry) == entry, oid
    assert kinds["outline"] > 500, kinds
    assert roundtrip((None, None)) == (None, None)
    api_only = ({"f": ("function", "(x, *, y=b'\\xff')"), "_g": ("class", "()")}, None)
    decoded = roundtrip(api_only)
    assert decoded == api_only and list(decoded[0] or {}) == ["f", "_g"]  # order kept


def test_deriving_from_a_decoded_outline_matches_the_original(
    gold: tuple[list[goldset.CommitInputs], dict[str, bytes]],
) -> None:
    inputs, blobs = gold
    derived = 0
    for i in inputs:
        for f in i.files:
            if not f.path.endswith(".py") or f.old_blob not in blobs or f.new_blob not in blobs:
                continue
            old, new = blobs[f.old_blob], blobs[f.new_blob]
            parsed = pyoutline.parse(old)
            if parsed is None or parsed[1] is None:
                continue
            decoded = roundtrip(parsed)[1]
            assert decoded is not None
            expected = pyoutline.derive(parsed[1], old, new)
            assert pyoutline.derive(decoded, old, new) == expected
            if expected is not None:
                derived += 1
                assert roundtrip((expected.api(), expected)) == (expected.api(), expected)
    assert derived > 200


def test_bytes_of_any_value_survive_in_a_body() -> None:
    body = pyoutline.Body(bytes(range(256)), 3, (1, 2), b"\t \x0c\x80\xff", (None,))
    outline = pyoutline.Outline(4, (pyoutline.Statement(0, (), body),))
    assert roundtrip((outline.api(), outline)) == (outline.api(), outline)


@pytest.mark.parametrize(
    "value",
    [
        {"o": [3, [[0, [["d", "f", "function", 5]], None]]]},  # a signature not a string
        {"o": [3, [[0, [], ["class _:\n", 2, [1], "  "]]]]},  # a body short of a field
        {"o": [True, []]},  # a boolean where a line count goes
        {"a": [["f", "function"]]},
        {"x": []},
        [1, 2],
        {"o": [1, [[0, [["a", ["x"], "yes"]], None]]]},
        {"o": [1, [[0, [], ["\u0100", 1, [], "", []]]]]},  # not one byte
    ],
)
def test_a_value_this_version_did_not_write_is_refused(value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        apicodec.decode(value)


# -- the store and the daily pipeline -------------------------------------------------


def _history(git_repo: GitFixture) -> None:
    """Three days each editing the same files: day 2 reads the blobs day 1 wrote."""
    files = {
        f"pkg/m{n}.py": f"N = {n}\n\n\n"
        + "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
        for n in range(3)
    }
    files["pkg/broken.py"] = "def (:\n"
    for path, text in files.items():
        git_repo.write(path, text)
    git_repo.commit("baseline", when=datetime(2026, 2, 28, 9, tzinfo=UTC))
    for day in (1, 2, 3):
        for hour in (9, 15):
            for n in range(3):
                path = f"pkg/m{n}.py"
                files[path] = files[path].replace("return x", f"return x * {day * hour}", 1)
                files[path] += f"def g{day}_{hour}(y):\n    return y\n"
                git_repo.write(path, files[path])
            files["pkg/broken.py"] += f"# {day} {hour}\n"
            git_repo.write("pkg/broken.py", files["pkg/broken.py"])
            git_repo.commit(f"day {day} {hour}h", when=datetime(2026, 3, day, hour, tzinfo=UTC))


def _run_day(
    git_repo: GitFixture, home: Path, day: date, *, use_cache: bool = True
) -> tuple[list[Facts], Counter[str]]:
    """One day as a new process runs it: a new store connection, source and extractor."""
    settings = build_settings(
        repos=(str(git_repo.path),),
        since=day.isoformat(),
        until=day.isoformat(),
        tz="UTC",
        lang="en",
        out=str(home / "out"),
        home=str(home),
        no_llm=True,
        cwd=home,
    )
    state = _prepare(settings, identify(settings.repos[0]), [day])
    assert state.source is not None and state.extractor is not None
    try:
        with Store.open(settings.db_path, use_cache=use_cache) as store:
            entries = analyse_day(state, "en", RuleAnalyser(), store, state.by_day[day], Emitter())
            keep_parses(state, store)  # as the run does when it ends
    finally:
        state.source.close()
    assert not state.failures
    return [e.facts for e in entries], state.extractor.apis.stats


DAYS = [date(2026, 3, d) for d in (1, 2, 3)]
FILES = ("pkg/m0.py", "pkg/m1.py", "pkg/m2.py", "pkg/broken.py")


def _versions(git_repo: GitFixture, day: date, paths: tuple[str, ...]) -> set[str]:
    """Blob SHAs of ``paths`` in the last commit of ``day``."""
    last = git_repo.text("rev-list", "-1", f"--before={day.isoformat()}T23:59:59Z", "HEAD")
    return {git_repo.text("rev-parse", f"{last.strip()}:{path}").strip() for path in paths}


def _rows(home: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "repoherald.db") as conn:
        return conn.execute("SELECT blob, codec FROM blob_apis").fetchall()


def test_a_new_days_process_parses_nothing_the_day_before_parsed(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    _history(git_repo)
    reference = [_run_day(git_repo, tmp_path / f"ref{d.day}", d)[0] for d in DAYS]
    home = tmp_path / "home"
    facts, stats = _run_day(git_repo, home, DAYS[0])
    assert facts == reference[0]
    # Day 1: each file's first version parsed whole, the rest derived; the
    # broken file's every version parsed (there is no outline to derive from).
    assert stats == Counter(parsed=3 + 3, derived=6)
    kept = _rows(home)
    assert {codec for _, codec in kept} == {API_CODEC}
    # The day's last version of each file, the broken one's too (it will not
    # parse later either); the versions the day replaced are never read again.
    assert sorted(blob for blob, _ in kept) == sorted(_versions(git_repo, DAYS[0], FILES))
    for day, expected in zip(DAYS[1:], reference[1:], strict=True):
        facts, stats = _run_day(git_repo, home, day)
        assert facts == expected
        # Yesterday's last versions come from the store and today's are derived
        # from them; only the broken file's new versions are parsed.
        assert stats == Counter(shelved=3 + 1, derived=6, parsed=2), stats


def test_a_damaged_row_is_a_miss_and_no_cache_does_not_read(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    _history(git_repo)
    expected, fresh_stats = _run_day(git_repo, tmp_path / "ref", DAYS[1])
    home = tmp_path / "home"
    _run_day(git_repo, home, DAYS[0])
    with sqlite3.connect(home / "repoherald.db") as conn:
        damaged = conn.execute(
            "UPDATE blob_apis SET data = replace(data, '\"f1\"', '\"f9\"')"
            " WHERE data LIKE '%\"f1\"%'"
        ).rowcount
    assert damaged > 0
    facts, stats = _run_day(git_repo, home, DAYS[1])
    assert facts == expected
    # The day-1 versions of the modules were damaged: parsed whole again, not
    # trusted; only the broken file's row (no "f1" in it) was read.
    assert stats == Counter(parsed=3 + 2, derived=6, shelved=1)
    facts, stats = _run_day(git_repo, home, DAYS[2], use_cache=False)
    assert stats["shelved"] == 0
    assert (facts, stats) == _run_day(git_repo, tmp_path / "ref3", DAYS[2])
    assert fresh_stats == stats


def test_rebuild_starts_without_kept_parses(git_repo: GitFixture, tmp_path: Path) -> None:
    _history(git_repo)
    home = tmp_path / "home"
    _run_day(git_repo, home, DAYS[0])
    assert _rows(home)
    Store.open(home / "repoherald.db", rebuild=True).close()
    assert _rows(home) == []


def test_rows_older_than_two_months_are_dropped(memory_store: Store) -> None:
    conn = memory_store.conn
    day = date(2026, 8, 20)
    blobapis.save(conn, "c", [("a" * 40, None)], day)
    blobapis.save(conn, "c", [("b" * 40, None)], day + timedelta(days=blobapis.KEEP_DAYS))
    kept = {r[0] for r in conn.execute("SELECT blob FROM blob_apis")}
    assert kept == {"a" * 40, "b" * 40}  # exactly KEEP_DAYS old: still there
    blobapis.save(conn, "c", [("c" * 40, None)], day + timedelta(days=blobapis.KEEP_DAYS + 1))
    kept = {r[0] for r in conn.execute("SELECT blob FROM blob_apis")}
    assert kept == {"b" * 40, "c" * 40}


def test_a_run_of_many_days_keeps_only_each_paths_last_version(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    """Renamed, deleted and identical files included: what the next day can ask for, no more."""
    _history(git_repo)
    git_repo.write("pkg/empty_a.py", "")
    git_repo.write("pkg/empty_b.py", "")
    git_repo.write("pkg/gone.py", "def gone():\n    pass\n")
    git_repo.commit("day 4 files", when=datetime(2026, 3, 4, 9, tzinfo=UTC))
    git_repo.move("pkg/m2.py", "pkg/moved.py")
    git_repo.remove("pkg/gone.py")
    git_repo.remove("pkg/empty_b.py")
    git_repo.commit("day 4 moves", when=datetime(2026, 3, 4, 10, tzinfo=UTC))
    home = tmp_path / "home"
    settings = build_settings(
        repos=(str(git_repo.path),), since="2026-03-01", until="2026-03-04", tz="UTC",
        lang="en", out=str(home / "out"), home=str(home), no_llm=True, cwd=home,
    )  # fmt: skip
    result = pipeline.run(settings)
    assert result.ok, result.failures
    last = ("pkg/m0.py", "pkg/m1.py", "pkg/moved.py", "pkg/broken.py", "pkg/empty_a.py")
    expected = _versions(git_repo, date(2026, 3, 4), last)
    assert len(expected) == 5
    assert sorted(blob for blob, _ in _rows(home)) == sorted(expected)
    # The next day's process finds them: nothing of day 4 is parsed whole again.
    git_repo.write("pkg/m0.py", (git_repo.path / "pkg/m0.py").read_text() + "X = 1\n")
    git_repo.write("pkg/empty_a.py", "Y = 2\n")
    git_repo.commit("day 5", when=datetime(2026, 3, 5, 9, tzinfo=UTC))
    _, stats = _run_day(git_repo, home, date(2026, 3, 5))
    assert stats == Counter(shelved=2, derived=2), stats


def test_a_file_back_at_an_earlier_version_keeps_that_version_once() -> None:
    old, new = "a" * 40, "b" * 40
    blobs = {old: b"def f(x):\n    return 1\n", new: b"def f(x, y):\n    return 2\n"}
    apis = blobapi.BlobApis(blobs.get, shelf=lambda oid: None)
    apis.pair(old, new)
    apis.written("m.py", new)
    apis.pair(new, old)  # a revert: the first version is the newest again
    apis.written("m.py", old)
    fresh = apis.take_fresh()
    assert [oid for oid, _ in fresh] == [old]
    assert fresh[0][1][0] == {"f": ("function", "(x)")}
    assert apis.take_fresh() == [], "handed to the store once"
    apis.written("n.py", new)  # another file with the second version's content
    assert [oid for oid, _ in apis.take_fresh()] == [new]
