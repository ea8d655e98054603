"""``index.md`` and ``index.json`` at the root of the archive: every repository-day, newest first.

The index is rebuilt from the JSON twins present in the archive after each
write, so it stays complete when reports are deleted, added by another
machine, or restored from git. Parsing every twin each time would grow with
the archive, so the previous ``index.json`` serves as a cache: an entry is
reused while its twin has the same size, and re-read otherwise (and always
for the twins just written). Only complete pairs are listed — a twin whose
``.md`` is missing would be a dead link.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from repoherald.i18n import EMOJI, t
from repoherald.models import Importance
from repoherald.publish.atomic import is_temp_name, sweep_stale, write_files
from repoherald.render import escape

INDEX_MD = "index.md"
INDEX_JSON = "index.json"
INDEX_VERSION = 1


@dataclass(frozen=True)
class IndexEntry:
    """One report pair, as listed in the index (paths relative to the archive, with ``/``)."""

    date: str
    lang: str
    repos: tuple[str, ...]
    commits: int
    high: int
    failed: int
    """Repositories of the report that could not be read."""
    md: str
    json: str
    bytes: int
    """Size of the JSON twin: the cache key of this entry."""


def entry_from_twin(data: Any, rel_json: str, size: int) -> IndexEntry | None:
    """The index entry of a parsed JSON twin, or None when ``data`` is not a report twin."""
    try:
        repos = data["repos"]
        stats = [r["stats"] for r in repos]
        return IndexEntry(
            date=str(data["date"]),
            lang=str(data["lang"]),
            repos=tuple(str(r["name"]) for r in repos),
            commits=sum(int(s["commits"]) for s in stats),
            high=sum(int(s["importance"][Importance.HIGH.value]) for s in stats),
            failed=sum(1 for r in repos if r.get("error")),
            md=rel_json[: -len(".json")] + ".md",
            json=rel_json,
            bytes=size,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _load_previous(path: Path) -> dict[str, IndexEntry]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {e["json"]: IndexEntry(**{**e, "repos": tuple(e["repos"])}) for e in data["reports"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _twins(out_dir: Path) -> list[tuple[str, int]]:
    """(relative path, size) of every candidate JSON twin; hidden folders and files skipped."""
    found: list[tuple[str, int]] = []
    for root, dirs, files in os.walk(out_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(root)
        for name in files:
            if not name.endswith(".json") or name.startswith(".") or is_temp_name(name):
                continue
            rel = (base / name).relative_to(out_dir).as_posix()
            if rel == INDEX_JSON:
                continue
            try:
                found.append((rel, (base / name).stat().st_size))
            except OSError:
                continue
    return found


def collect(out_dir: Path, fresh: dict[str, IndexEntry]) -> list[IndexEntry]:
    """Every complete report pair in ``out_dir``, newest first.

    ``fresh`` holds entries known to be current (the twins just written), by relative path.
    """
    previous = _load_previous(out_dir / INDEX_JSON)
    entries: list[IndexEntry] = []
    for rel, size in _twins(out_dir):
        if not (out_dir / (rel[: -len(".json")] + ".md")).is_file():
            continue
        if rel in fresh:
            entries.append(fresh[rel])
            continue
        cached = previous.get(rel)
        if cached is not None and cached.bytes == size:
            entries.append(cached)
            continue
        try:
            data = json.loads((out_dir / rel).read_bytes())
        except (OSError, ValueError):
            continue
        entry = entry_from_twin(data, rel, size)
        if entry is not None:
            entries.append(entry)
    entries.sort(key=lambda e: (e.md, e.lang))
    entries.sort(key=lambda e: e.date, reverse=True)
    return entries


def render_index_json(entries: list[IndexEntry]) -> str:
    reports = [{**asdict(e), "repos": list(e.repos)} for e in entries]
    data = {"schema_version": INDEX_VERSION, "reports": reports}
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def _link(rel: str) -> str:
    """A relative link that GitHub resolves from the archive root (``index.md``'s folder)."""
    return quote(rel, safe="/")


def render_index_md(entries: list[IndexEntry], lang: str) -> str:
    """The index as a GitHub Markdown table, one row per report pair."""
    lines = [f"# {t(lang, 'index.title')}", ""]
    if not entries:
        return "\n".join([*lines, t(lang, "index.empty"), ""])
    lines += [t(lang, "index.intro"), ""]
    head = [
        t(lang, "index.col_date"),
        t(lang, "index.col_repo"),
        t(lang, "index.col_lang"),
        t(lang, "index.col_commits"),
        EMOJI[Importance.HIGH],
        "JSON",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in entries:
        name = escape.cell(", ".join(e.repos))
        if e.failed:
            name += f" (❌ {t(lang, 'index.failed')}: {e.failed})"
        cells = [
            e.date,
            f"[{name}]({_link(e.md)})",
            escape.cell(e.lang),
            str(e.commits),
            str(e.high),
            f"[json]({_link(e.json)})",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def update_index(
    out_dir: Path, lang: str, fresh: dict[str, IndexEntry] | None = None
) -> list[Path]:
    """Rebuild ``index.json`` then ``index.md`` in ``out_dir`` if they changed; return their paths.

    ``fresh`` holds the entries of twins just written (by relative path): they
    are taken as they are instead of being read back.
    """
    sweep_stale(out_dir)
    entries = collect(out_dir, fresh or {})
    json_path, md_path = out_dir / INDEX_JSON, out_dir / INDEX_MD
    files = [(json_path, render_index_json(entries)), (md_path, render_index_md(entries, lang))]
    if any(_differs(path, text) for path, text in files):
        write_files(files, sync=False)  # derived data: rebuilt by the next write if lost
    return [md_path, json_path]


def _differs(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") != text
    except (OSError, UnicodeDecodeError):
        return True
