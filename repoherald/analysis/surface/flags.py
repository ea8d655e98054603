"""Command-line flags a commit removes, renames or re-defaults.

A serving framework's flags (``--max-model-len``, ``--quant_type``) are
written into every deployment's launch script: one that disappears breaks the
launch, one whose default moves changes every deployment that did not set it.
The comparison itself is :func:`repoherald.analysis.surface.settings.flag_changes`,
the one the downstream report uses; this module decides which files of a
commit are worth parsing for it, so the rules path pays only for the files
that define flags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from repoherald.analysis.surface.change import SurfaceDiffer
from repoherald.analysis.surface.compare import (
    FLAG_DEFAULT,
    FLAG_RENAMED,
    CommitFiles,
    FileVersions,
    has_marker,
)
from repoherald.analysis.surface.extract import FLAG_MARKERS
from repoherald.analysis.surface.settings import flag_changes
from repoherald.models import FileChange, FlagChange

_SCRIPT = b'__name__ == "__main__"'
_SCRIPT_SINGLE = b"__name__ == '__main__'"
_KINDS = {FLAG_DEFAULT: "default", FLAG_RENAMED: "renamed"}


class FlagReader:
    """Flag changes of one repository's commits; parsed modules are cached by blob."""

    def __init__(self, source: Callable[[str], bytes | None]) -> None:
        self._source = source
        self._differ = SurfaceDiffer(cache_size=64)

    def changes(
        self, files: Sequence[FileChange], is_source: Callable[[str], bool]
    ) -> list[FlagChange]:
        """Flags removed, renamed or re-defaulted by the commit's modified Python sources.

        Only files that define flags on either side are parsed. A module run
        as a script (a ``__main__`` guard) is a tool: its flags are nobody's
        deployment.
        """
        versions = []
        for f in files:
            if f.binary or not f.path.endswith(".py") or not is_source(f.path):
                continue
            if not (f.old_blob and f.new_blob):
                continue
            old, new = self._source(f.old_blob), self._source(f.new_blob)
            if old is None or new is None:
                continue
            if not (has_marker(old, FLAG_MARKERS) or has_marker(new, FLAG_MARKERS)):
                continue
            if any(m in data for data in (old, new) for m in (_SCRIPT, _SCRIPT_SINGLE)):
                continue
            old_path = f.old_path or f.path
            versions.append(FileVersions(old_path, f.path, old, new, f.old_blob, f.new_blob))
        if not versions:
            return []
        found = flag_changes(CommitFiles(self._differ.extract, versions), None)
        return [
            FlagChange(c.name, _KINDS.get(c.kind, "removed"), c.old, c.new, c.path) for c in found
        ]
