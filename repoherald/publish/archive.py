"""Write reports into the archive, atomically.

A reader (or a git commit of the archive) must never see half a report: each
file is written to a temporary sibling, flushed to disk, then renamed over
the target in one step.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import date
from pathlib import Path

from repoherald.errors import PublishError


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` so the file is either old or new, never partial."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise PublishError(
            f"cannot write {path}: {exc.strerror} (check --out points at a writable directory)"
        ) from None


def safe_component(name: str) -> str:
    """A file-name-safe version of a repository or report name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")
    return cleaned[:80] or "report"


def report_path(out_dir: Path, template: str, name: str, day: date, suffix: str) -> Path:
    """``out/<template>.<suffix>``.

    The template knows ``{year}``, ``{month}``, ``{name}`` and ``{date}``.
    """
    rel = template.format(
        year=f"{day.year:04d}",
        month=f"{day.month:02d}",
        name=safe_component(name),
        date=day.isoformat(),
    )
    parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
    return (
        out_dir.joinpath(*parts).with_suffix("." + suffix) if parts else out_dir / f"{day}.{suffix}"
    )
