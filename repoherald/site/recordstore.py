"""The full day records, one file per repository and month, beside the manifest.

A build reads the files of the repositories and months it changed (their
repository page and search segment are rebuilt from them) and leaves the
rest alone, so a new day costs a twelfth of one repository's records, not
the archive's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from repoherald.publish.layout import safe_component
from repoherald.site.records import DayRecord

STORE = ".repoherald-site"


def bucket(repo: str, day: str) -> str:
    """The file a record of ``repo`` on ``day`` (YYYY-MM-DD) is kept in."""
    return f"{safe_component(repo)}@{day[:7]}"


def bucket_of(record: DayRecord) -> str:
    return bucket(record.repos[0] if record.repos else record.twin, record.date)


def _path(out: Path, key: str) -> Path:
    return out / STORE / f"{key}.json"


def load(out: Path, key: str) -> dict[str, DayRecord]:
    """The records of one bucket by twin path (empty when absent or damaged)."""
    try:
        data = json.loads(_path(out, key).read_text(encoding="utf-8"))
        return {rel: DayRecord.from_json(r) for rel, r in data.items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return {}


def save(out: Path, key: str, records: dict[str, DayRecord]) -> None:
    path = _path(out, key)
    if not records:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {rel: r.to_json() for rel, r in sorted(records.items())}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    tmp.replace(path)


def load_many(out: Path, keys: Iterable[str]) -> list[DayRecord]:
    return [r for key in sorted(set(keys)) for r in load(out, key).values()]


def keys(out: Path) -> list[str]:
    """Every bucket in the store."""
    folder = out / STORE
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
