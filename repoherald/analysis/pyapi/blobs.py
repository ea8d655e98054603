"""Public APIs of Python blobs, cached by blob SHA and derived from neighbours.

A month of history touches the same files over and over: the blob one
commit writes is the "before" of the next commit to touch that file. So each
blob's parsed API is kept (a small LRU by blob SHA), and when one version of
a modified file is known the other is derived by parsing only the statements
that changed (:func:`repoherald.analysis.pyapi.outline.derive`), which gives the
same API as a whole parse. Only a file's first version in a run, added and
deleted files, and edits that cannot be derived are parsed whole.

The memory cache lives for one run. A daily run's first version of a file
is the version the day before wrote, so a :data:`Shelf` (the store, by blob
SHA: :mod:`repoherald.store.blobapis`) is asked on a memory miss before
parsing, and what a run parses or derives is handed back by
:meth:`BlobApis.take_fresh` for the store to keep. Only the newest version
of each path is handed back (:meth:`BlobApis.written` says which that is):
a version a later commit of the run replaced is never a "before" again, and
encoding and storing every one cost a first run more than it saved.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable

from repoherald.analysis.pyapi import outline as pyoutline
from repoherald.analysis.pyapi.api import PublicApi

MAX_PARSE_BYTES = 1_000_000
"""Blobs larger than this are measured, not parsed."""

API_CACHE_SIZE = 1024
"""Parsed Python APIs kept in memory, by blob SHA.

A month of a busy repository writes a few hundred Python blobs; with room for
fewer, a file touched again weeks later was parsed whole a second time. An
entry is a few kilobytes (the blob's bytes are kept apart, within
:data:`SOURCE_CACHE_BYTES`)."""

SOURCE_CACHE_BYTES = 32_000_000
"""Python blob contents kept in memory, so that deriving from a known version
does not read it from git again."""

BlobReader = Callable[[str], bytes | None]
_Entry = tuple[PublicApi | None, pyoutline.Outline | None]
Shelf = Callable[[str], _Entry | None]
"""Entries kept by an earlier run, by blob SHA; None when it has none."""


class BlobApis:
    """The public API of Python blobs of one repository, by blob SHA.

    ``incremental=False`` parses every blob whole: the reference that the
    tests compare the derived results against.
    """

    def __init__(
        self, read_blob: BlobReader, *, incremental: bool = True, shelf: Shelf | None = None
    ) -> None:
        self._read_blob = read_blob
        self._incremental = incremental
        self.shelf = shelf
        """Asked on a memory miss before parsing (the store); set per day by the pipeline."""
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._unsaved: set[str] = set()
        """Blobs parsed or derived here (and readable), not yet handed to the store."""
        self._newest: dict[str, str] = {}
        """Each path's newest version written in this run, by :meth:`written`."""
        self._paths_of: Counter[str] = Counter()
        """How many paths' newest version each blob is (an empty file is many's)."""
        self._fresh: dict[str, _Entry] = {}
        """The unsaved entries that are some path's newest version: what the store gets."""
        self._sources: OrderedDict[str, bytes] = OrderedDict()
        self._split: dict[str, list[bytes]] = {}
        """The lines of held sources that were derived from or to (within the same budget)."""
        self._sources_size = 0
        self.stats: Counter[str] = Counter()
        """``parsed``: blobs parsed whole; ``derived``: only their changed statements
        parsed; ``shelved``: found on the :attr:`shelf`."""

    def api(self, oid: str) -> PublicApi | None:
        """The API of one blob; None when it cannot be read or parsed."""
        entry = self._cached(oid) or self._parse(oid)
        return entry[0]

    def pair(self, old_oid: str, new_oid: str) -> tuple[PublicApi | None, PublicApi | None]:
        """APIs of both sides of a modified file, parsing at most what the edit requires."""
        if not self._incremental:
            return self.api(old_oid), self.api(new_oid)
        old, new = self._cached(old_oid), self._cached(new_oid)
        if old is None and new is None:
            old = self._parse(old_oid)
        if old is None:
            assert new is not None
            old = self._derive(new_oid, new, old_oid)
        elif new is None:
            new = self._derive(old_oid, old, new_oid)
        return old[0], new[0]

    def written(self, path: str, oid: str | None, old_path: str | None = None) -> None:
        """Say that a commit made ``oid`` the version of ``path`` (None: deleted or unparsable).

        Called after the commit's APIs were asked for, so the entry of ``oid``
        is at hand; it is held for :meth:`take_fresh` until a later commit
        replaces it. ``old_path`` is the path a rename moved the file from.
        """
        if self.shelf is None:
            return  # nothing will take them
        if old_path and old_path != path:
            self._drop(old_path)
        self._drop(path)
        if not oid:
            return
        self._newest[path] = oid
        self._paths_of[oid] += 1
        entry = self._entries.get(oid)
        if oid in self._unsaved and entry is not None:
            self._fresh[oid] = entry

    def _drop(self, path: str) -> None:
        oid = self._newest.pop(path, None)
        if oid is None:
            return
        self._paths_of[oid] -= 1
        if self._paths_of[oid] <= 0:
            del self._paths_of[oid]
            self._fresh.pop(oid, None)

    def take_fresh(self) -> list[tuple[str, _Entry]]:
        """The newest version of each path, parsed or derived since the last call, for the
        store to keep."""
        fresh, self._fresh = list(self._fresh.items()), {}
        self._unsaved.difference_update(oid for oid, _ in fresh)
        return fresh

    def _cached(self, oid: str) -> _Entry | None:
        entry = self._entries.get(oid)
        if entry is not None:
            self._entries.move_to_end(oid)
        elif self.shelf is not None:
            entry = self.shelf(oid)
            if entry is not None:
                self.stats["shelved"] += 1
                self._remember(oid, entry, fresh=False)
        return entry

    def _remember(self, oid: str, entry: _Entry, *, fresh: bool = True) -> _Entry:
        if fresh and self.shelf is not None:  # kept only while something will take them
            self._unsaved.add(oid)
        self._entries[oid] = entry
        if len(self._entries) > API_CACHE_SIZE:
            # Least recently used first: the blob a commit writes is the one
            # the next commit touching that file reads, so a small cache
            # catches the reuse while memory stays flat over long ranges.
            self._entries.popitem(last=False)
        return entry

    def source(self, oid: str) -> bytes | None:
        """A blob's bytes, from the memory cache when another step read it already.

        Mostly Python sources; the release check also reads a commit's small
        version files through it, so a blob two checks need is read once.
        """
        return self._source(oid)

    def _source(self, oid: str) -> bytes | None:
        """A blob's bytes, kept for a while in case another version is derived from it."""
        data = self._sources.get(oid)
        if data is not None:
            self._sources.move_to_end(oid)
            return data
        data = self._read_blob(oid)
        if data is not None and self._incremental:
            self._sources[oid] = data
            self._sources_size += len(data)
            self._shrink()
        return data

    def _lines(self, oid: str, data: bytes) -> list[bytes]:
        """The lines of a blob, split once while its bytes are held.

        A large file edited by many commits was split twice per edit, as the
        new side and then as the next edit's known side.
        """
        lines = self._split.get(oid)
        if lines is None:
            lines = data.splitlines(keepends=True)
            if oid in self._sources:
                self._split[oid] = lines
                self._sources_size += len(data)  # about what the list of lines adds
                self._shrink()
        return lines

    def _shrink(self) -> None:
        while self._sources_size > SOURCE_CACHE_BYTES:
            oid, data = self._sources.popitem(last=False)
            self._sources_size -= len(data)
            if self._split.pop(oid, None) is not None:
                self._sources_size -= len(data)

    def _parse(self, oid: str, data: bytes | None = None) -> _Entry:
        if data is None:
            data = self._source(oid)
        self.stats["parsed"] += 1
        parsed = pyoutline.parse(data, max_bytes=MAX_PARSE_BYTES) if data is not None else None
        # A blob that could not be read is not kept: it may be readable later.
        # One that was read and did not parse is: it never will.
        entry = parsed if parsed is not None else (None, None)
        return self._remember(oid, entry, fresh=data is not None)

    def _derive(self, known_oid: str, known: _Entry, oid: str) -> _Entry:
        """The entry of ``oid`` from a known version of the same file, parsing only if needed."""
        outline = known[1]
        data = self._source(oid)
        known_data = self._source(known_oid) if outline is not None else None
        if outline is None or data is None or known_data is None:
            return self._parse(oid, data)
        lines = None
        if len(data) <= MAX_PARSE_BYTES:
            lines = self._lines(known_oid, known_data), self._lines(oid, data)
        derived = pyoutline.derive(outline, known_data, data, MAX_PARSE_BYTES, lines)
        if derived is None:
            return self._parse(oid, data)
        self.stats["derived"] += 1
        return self._remember(oid, (derived.api(), derived))
