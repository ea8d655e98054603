"""A synthetic archive for the site: N repositories × D days of twins, written directly.

Commit shapes (titles, authors, files) come from a real repository's history
(``/work/shared/data/vllm-ascend-main-shapes.jsonl``); importance, change
type, areas, PR labels and "affects your code" are drawn from a seeded
generator so every filter and chart has something to show. No analysis
runs: each day is a :class:`~repoherald.models.DayReport` rendered by the
real twin writer (:func:`~repoherald.render.json_twin.render_json`), and the
Markdown beside it is a one-line stub (the site reads only twins).

``make_archive(out, repos=2, days=14, per_day=20)`` is small enough for a
browser test; the benchmark uses the defaults (10 × 365 × ~27 ≈ 100,000).
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from repoherald.models import (
    Analysis,
    ApiChange,
    ChangeType,
    Commit,
    DayReport,
    Entry,
    Facts,
    FileChange,
    FileStatus,
    Importance,
    Person,
    RepoSection,
)
from repoherald.publish.layout import report_path
from repoherald.render.json_twin import render_json
from repoherald.render.view import build_view

SHAPES = Path("/work/shared/data/vllm-ascend-main-shapes.jsonl")
TEMPLATE = "{year}/{name}/{date}"
LABELS = ("ready", "bug", "performance", "documentation", "ci", "needs-test", "module:ops")
_STATUS = {"A": FileStatus.ADDED, "D": FileStatus.DELETED, "R": FileStatus.RENAMED}


def load_shapes(path: Path = SHAPES) -> list[dict[str, Any]]:
    """The commit shapes (one JSON object per line)."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _facts(shape: dict[str, Any], rng: random.Random) -> Facts:
    files = tuple(
        FileChange(
            path=str(f["path"]),
            status=_STATUS.get(str(f.get("status")), FileStatus.MODIFIED),
            added=int(f.get("added") or 0),
            deleted=int(f.get("deleted") or 0),
        )
        for f in (shape.get("files") or [])[:40]
    )
    areas = tuple(
        dict.fromkeys(f.path.split("/", 1)[0] if "/" in f.path else "(root)" for f in files)
    )
    apis = tuple(
        ApiChange(
            path=f.path,
            name=f"{f.path.rsplit('/', 1)[-1].split('.')[0]}_{rng.randint(1, 40)}",
            kind="function",
            change=rng.choice(("added", "removed", "signature")),
        )
        for f in files[:2]
        if f.path.endswith(".py")
    )
    return Facts(
        files=files,
        added=sum(f.added for f in files),
        deleted=sum(f.deleted for f in files),
        areas=areas[:5],
        pr_number=None,
        tags=(),
        conventional_type=None,
        conventional_scope=None,
        breaking_marker=False,
        is_revert=False,
        reverted_sha=None,
        co_authors=(),
        kinds={},
        api_changes=apis,
        dependency_changes=(),
    )


def _entry(shape: dict[str, Any], when: datetime, n: int, rng: random.Random) -> Entry:
    sha = f"{rng.getrandbits(160):040x}"
    person = Person(str(shape.get("author") or "someone"), "dev@example.com")
    stamp = int(when.timestamp())
    title = str(shape.get("title") or "Update")
    commit = Commit(sha, (), person, stamp, 0, person, stamp, 0, title + "\n")
    facts = _facts(shape, rng)
    importance = rng.choices(list(Importance), weights=(1, 3, 6))[0]
    change_type = rng.choice(list(ChangeType))
    area = facts.areas[0] if facts.areas else "(root)"
    reasons = (f"Type: the title says `{change_type.value}`", f"touches `{area}`")
    analysis = Analysis(
        analyser="rules/9",
        change_type=change_type,
        importance=importance,
        reasons=reasons,
        summary=f"{change_type.value}: {title}",
        impact=tuple(f"`{a}`: {n % 7 + 1} files" for a in facts.areas[:3]),
        recommendations=("Run your own tests",) if importance is not Importance.LOW else (),
    )
    return Entry(commit, replace(facts, pr_number=10_000 + n), analysis)


def _labels(rng: random.Random) -> tuple[str, ...]:
    return tuple(sorted(rng.sample(LABELS, rng.randint(0, 2))))


def make_archive(
    out: Path,
    repos: int = 10,
    days: int = 365,
    per_day: int = 27,
    start: date = date(2025, 8, 1),
    seed: int = 23,
    shapes: list[dict[str, Any]] | None = None,
) -> int:
    """Write ``repos`` × ``days`` twins (about ``per_day`` commits each) under ``out``;
    the number of commits written."""
    rng = random.Random(seed)
    pool = shapes if shapes is not None else load_shapes()
    total = 0
    for r in range(repos):
        name = f"project-{r:02d}"
        for d in range(days):
            day = start + timedelta(days=d)
            count = max(0, int(rng.gauss(per_day, per_day / 3)))
            begin = datetime.combine(day, datetime.min.time(), UTC)
            entries = tuple(
                _entry(rng.choice(pool), begin + timedelta(minutes=30 * i % 1440), total + i, rng)
                for i in range(count)
            )
            total += count
            _write_day(out, name, day, begin, entries, rng)
    return total


def add_day(out: Path, repo: int, day: date, per_day: int = 27, seed: int = 24) -> int:
    """Write one more day of repository ``repo`` (a new twin); its number of commits."""
    rng = random.Random(seed)
    pool = load_shapes()
    begin = datetime.combine(day, datetime.min.time(), UTC)
    entries = tuple(
        _entry(rng.choice(pool), begin + timedelta(minutes=20 * i), i, rng) for i in range(per_day)
    )
    _write_day(out, f"project-{repo:02d}", day, begin, entries, rng)
    return per_day


def _write_day(
    out: Path, name: str, day: date, begin: datetime, entries: tuple[Entry, ...], rng: random.Random
) -> None:
    section = RepoSection(
        name, "main", f"https://github.com/example/{name}", entries, identity=name
    )
    report = DayReport(
        day=day, tz_name="UTC", start=begin, end=begin + timedelta(days=1), lang="en",
        sections=(section,), analysers=("rules/9",), generated_at=begin + timedelta(days=1),
        version="bench",
    )  # fmt: skip
    twin = json.loads(render_json(build_view(report)))
    for c in twin["repos"][0]["commits"]:
        c["pr_labels"] = list(_labels(rng))
    affected = [c for c in twin["repos"][0]["commits"] if rng.random() < 0.03]
    if affected:
        twin["repos"][0]["downstream"] = _downstream(affected)
    path = report_path(out, TEMPLATE, name, day, "json", tag="en")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(twin, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    path.with_suffix(".md").write_text(f"# {name} {day}\n", encoding="utf-8")


def _downstream(commits: list[dict[str, Any]]) -> dict[str, Any]:
    """An "Affects your code" block naming ``commits`` (as the twin writer shapes it)."""
    return {
        "anchor": "affects-your-code",
        "packages": ["vllm"],
        "watch": [],
        "upstream_unparsed": 0,
        "projects": [
            {
                "name": "my-plugin", "path": "my-plugin", "files": 120, "lines": 30_000,
                "not_checked": 0, "excluded": [], "note": "",
                "impacts": [
                    {"kind": "breaks", "reason_code": "ds.code.removed",
                     "reason": "a name you import is gone",
                     "upstream": "vllm.x", "replacement": "", "detail": "", "detail_message": "",
                     "path": "my_plugin/a.py", "line": 3, "url": None, "upstream_path": "",
                     "upstream_line": 0, "sha": c["sha"], "commit_anchor": c["anchor"]}
                    for c in commits
                ],
            }
        ],
        "watch_hits": [],
    }  # fmt: skip
