"""The "Affects your code" step: what each commit breaks or changes in the reader's own code.

For a repository with ``downstream`` checkouts or ``watch`` globs, a run
indexes each checkout once (cached in the store under
:func:`~repoherald.sources.checkout.index_key`, so an unchanged checkout is
read back, not re-parsed), then, per report day, diffs the changed surface
of every commit against the indexes and the globs. The result is attached
to the day's entries, never cached with them: the general analysis of a
commit stays the same for every reader, while "🔴 because it breaks
``plug/worker.py:8``" belongs to this report. Cached and fresh commits are
checked alike; the check costs about a millisecond or two per commit.

Nothing here stops a report: a checkout that is missing or cannot be read
becomes a note in the report and a failure of the run (exit status 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from repoherald.analysis.downstream.impact import BREAKS, Impact, match, match_watch
from repoherald.analysis.downstream.index import DownstreamIndex
from repoherald.analysis.facts.commit import package_names_for
from repoherald.analysis.surface.change import (
    MAX_BYTES,
    UNPARSED,
    Interest,
    SurfaceDiffer,
    is_public_module,
    module_name,
    reexports,
    versions_from_changes,
)
from repoherald.config.downstream import Downstream
from repoherald.errors import SourceError
from repoherald.i18n import CONSOLE_LANGUAGE, localise
from repoherald.models import (
    Arg,
    DownstreamCheck,
    DownstreamImpact,
    DownstreamProject,
    Entry,
    FileChange,
    Importance,
    Text,
    WatchHit,
)
from repoherald.pipeline.events import Emitter
from repoherald.pipeline.identity import RepoIdentity
from repoherald.sources.base import Source, TreeSource
from repoherald.sources.checkout import (
    file_url_base,
    index_checkout,
    index_key,
    not_a_directory,
)
from repoherald.store.base import Store

CONTAINED_ERRORS = (RecursionError, ValueError, KeyError, IndexError, TypeError, UnicodeError)
"""A bug of ours on one strange commit or file must not cost the report."""


@dataclass
class Checkout:
    """One downstream checkout for the run: its index (None when it could not be read)."""

    config: Downstream
    project: DownstreamProject
    index: DownstreamIndex | None = None


@dataclass
class DownstreamRun:
    """One repository's downstream checkouts and watch globs, prepared once per run."""

    repo: str
    source: Source
    packages: tuple[str, ...]
    watch: tuple[str, ...]
    checkouts: list[Checkout]
    aliases: dict[str, str] = field(default_factory=dict)
    """Re-exported name -> definition at the branch tip (``vllm.LLM`` -> where it is defined)."""
    interest: Interest = field(default_factory=Interest)
    """What the checkouts use, so a commit's other files are not compared."""
    failures: list[str] = field(default_factory=list)
    differ: SurfaceDiffer = field(default_factory=SurfaceDiffer)

    def check_day(self, entries: list[Entry]) -> tuple[list[Entry], DownstreamCheck]:
        """The entries with their impacts and watch hits (and 🔴 when they have any)."""
        indexed = [c for c in self.checkouts if c.index is not None]
        out: list[Entry] = []
        unparsed = 0
        for e in entries:
            impacts: list[DownstreamImpact] = []
            if indexed and e.facts.files:
                try:
                    impacts, bad = self._impacts(e.facts.files, indexed)
                except CONTAINED_ERRORS as exc:
                    self.failures.append(
                        f"{self.repo} {e.commit.sha[:7]}: downstream check failed: {exc!r}"
                    )
                    impacts, bad = [], 0
                unparsed += bad
            hits = _watch_hits(e.facts.files, self.watch)
            e = replace(e, impacts=tuple(impacts), watched=tuple(hits))
            out.append(raise_importance(e, self._names()) if impacts or hits else e)
        check = DownstreamCheck(
            projects=tuple(c.project for c in self.checkouts),
            watch=self.watch,
            packages=self.packages,
            upstream_unparsed=unparsed,
        )
        return out, check

    def _impacts(
        self, files: Sequence[FileChange], indexed: list[Checkout]
    ) -> tuple[list[DownstreamImpact], int]:
        versions = versions_from_changes(files, lambda oid: self.source.read_blob(oid, MAX_BYTES))
        changes = self.differ.changes(versions, self.interest)
        out: list[DownstreamImpact] = []
        for c in indexed:
            assert c.index is not None
            out.extend(_record(c.config.label, i) for i in match(changes, c.index, self.aliases))
        return out, sum(1 for ch in changes if ch.kind == UNPARSED)

    def keep_floor(self, entry: Entry) -> Entry:
        """The entry with its downstream 🔴 and reason, if a later analysis lost them.

        The rules analysis got them in :meth:`check_day`; a model's answer
        replaces that analysis, so the floor is applied to it once more.
        """
        if not (entry.impacts or entry.watched):
            return entry
        first = entry.analysis.reasons[0] if entry.analysis.reasons else None
        if isinstance(first, Text) and first.code.startswith("ds."):
            return entry
        return raise_importance(entry, self._names())

    def _names(self) -> dict[str, str]:
        return {c.config.label: c.project.name for c in self.checkouts}


def prepare(
    repo: RepoIdentity, name: str, source: Source, tip: str | None, store: Store, events: Emitter
) -> DownstreamRun | None:
    """Index the repository's downstream checkouts; None when it has none and no watch globs.

    ``name`` is what the report calls the repository (its messages start with it); the
    upstream's packages are guessed from its own name, not from a configured display name.
    """
    cfg = repo.config
    if not cfg.downstream and not cfg.watch:
        return None
    listing = _listing(source, tip) if cfg.downstream else None
    packages = cfg.upstream_packages or derive_packages(listing, repo.own_name)
    run = DownstreamRun(name, source, packages, cfg.watch, [])
    with events.stage("downstream", name):
        for d in cfg.downstream:
            run.checkouts.append(_open_checkout(d, packages, store, run, events))
        indexes = [c.index for c in run.checkouts if c.index is not None]
        if indexes and listing and isinstance(source, TreeSource):
            run.aliases = upstream_aliases(source, listing, packages)
        run.interest = _union([i.interest(run.aliases) for i in indexes])
    return run


def _listing(source: Source, tip: str | None) -> list[tuple[str, str]] | None:
    """The upstream's files at the tip, when the source can list them (None: it cannot)."""
    if not tip or not isinstance(source, TreeSource):
        return None
    try:
        return source.list_files(tip)
    except SourceError:
        return None  # the packages then come from the configuration or the name


def upstream_aliases(
    source: TreeSource, listing: list[tuple[str, str]], packages: tuple[str, ...]
) -> dict[str, str]:
    """Re-exports in the upstream packages' ``__init__.py`` files at the branch tip.

    Taken once per run at the tip, not per day: the downstream checkout is
    indexed as it is now, so the re-exports it can import are today's.
    """
    inits = []
    for path, oid in listing:
        module = module_name(path) if path.endswith("__init__.py") else None
        if module is not None and module.partition(".")[0] in packages:
            inits.append((path, oid))
    blobs = source.read_blobs((oid for _, oid in inits), MAX_BYTES)
    return reexports((path, blobs[oid]) for path, oid in inits if oid in blobs)


def _open_checkout(
    d: Downstream, packages: tuple[str, ...], store: Store, run: DownstreamRun, events: Emitter
) -> Checkout:
    """Index one checkout (or read its index back); a checkout that cannot be read is a note."""
    label, path = d.label, Path(d.path)
    project = DownstreamProject(label=label, name=path.name or label)
    problem = not_a_directory(path)
    if problem:
        code = "ds.not_found" if problem.startswith("does not exist") else "ds.not_dir"
        if problem.startswith("cannot be read"):
            code = "ds.unreadable"
        run.failures.append(f"{run.repo}: downstream {label} ({path}) {problem}")
        return Checkout(d, replace(project, note=Text(code, {"path": label})))
    try:
        index = _index(path, packages, store)
        url = file_url_base(path, d.web_url)
    except (SourceError, OSError, *CONTAINED_ERRORS) as exc:
        run.failures.append(f"{run.repo}: downstream {label} could not be indexed: {exc}")
        return Checkout(d, replace(project, note=Text("ds.unreadable", {"path": label})))
    project = _describe(project, index, url)
    if project.note:  # no Python files, or none that uses the upstream: say it here too
        events.say(
            f"{run.repo}: {localise(CONSOLE_LANGUAGE, project.note)}", "downstream", run.repo
        )
    return Checkout(d, project, index)


def _index(path: Path, packages: tuple[str, ...], store: Store) -> DownstreamIndex:
    key = index_key(path, packages)
    cached = store.load_downstream_index(key)
    if cached is not None:
        try:
            return DownstreamIndex.from_dict(cached)
        except (ValueError, KeyError, TypeError):
            pass  # written by another version of the index: build it again
    index = index_checkout(path, packages)
    store.save_downstream_index(key, f"{path}\0{','.join(packages)}", index.to_dict())
    return index


def _describe(
    project: DownstreamProject, index: DownstreamIndex, url: str | None
) -> DownstreamProject:
    reasons = Counter(n.reason for n in index.not_checked)
    note: Text | str = ""
    if index.files == 0:
        note = Text("ds.no_python", {"path": project.label})
    elif not index.refs and not index.classes and not index.strings:
        note = Text("ds.no_uses", {"path": project.label, "packages": ", ".join(index.packages)})
    return replace(
        project,
        files=index.files,
        lines=index.lines,
        not_checked=tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        excluded=index.excluded,
        file_url=url,
        note=note,
    )


def derive_packages(listing: list[tuple[str, str]] | None, name: str) -> tuple[str, ...]:
    """The upstream's top-level import packages, from its tree at the tip.

    Packages are top-level directories (or ``src/`` ones) with an
    ``__init__.py`` that are part of the library (not tests, benchmarks,
    examples...). Those the repository's name suggests win (``vllm`` in
    vllm-project/vllm); otherwise the one with the most Python files, since a
    wrong extra package would make the reader's own same-named package look
    like upstream code. Without a tree, the name's import spelling.
    """
    guess = name.rsplit("/", 1)[-1].lower().replace("-", "_").replace(".", "_")
    if listing is None:
        return (guess,) if guess.isidentifier() else ()
    sizes: Counter[str] = Counter()
    tops: set[str] = set()
    for path, _ in listing:
        parts = path.split("/")
        if parts[0] == "src" and len(parts) > 2:
            parts = parts[1:]
        if len(parts) < 2 or not parts[-1].endswith(".py"):
            continue
        sizes[parts[0]] += 1
        if len(parts) == 2 and parts[1] == "__init__.py":
            tops.add(parts[0])
    tops = {t for t in tops if t.isidentifier() and is_public_module(f"{t}/__init__.py")}
    named = tops & package_names_for(name)
    if named:
        return tuple(sorted(named))
    if tops:
        return (min(tops, key=lambda t: (-sizes[t], t)),)
    return (guess,) if guess.isidentifier() else ()


def raise_importance(entry: Entry, names: dict[str, str]) -> Entry:
    """🔴 for this report, with the first reason naming the downstream line or watched path."""
    if entry.impacts:
        first = min(entry.impacts, key=lambda i: (i.kind != BREAKS, i.project, i.path, i.line))
        args: dict[str, Arg] = {
            "project": names.get(first.project, first.project),
            "where": _tick(f"{first.path}:{first.line}"),
            "kind": Text(f"ds.kind.{first.kind}"),
            "upstream": _tick(first.upstream),
        }
        more = len(entry.impacts) + len(entry.watched) - 1
    else:
        hit = entry.watched[0]
        args = {"glob": _tick(hit.glob), "path": _tick(hit.path)}
        more = len(entry.watched) - 1
    code = "ds.reason" if entry.impacts else "ds.reason_watch"
    if more:
        code, args = code + "_more", {**args, "n": more}
    analysis = entry.analysis
    return replace(
        entry,
        analysis=replace(
            analysis, importance=Importance.HIGH, reasons=(Text(code, args), *analysis.reasons)
        ),
    )


def _tick(text: str) -> str:
    """A code span in report text, unless the text holds a backtick itself (then plain)."""
    return text if "`" in text else f"`{text}`"


def _record(label: str, i: Impact) -> DownstreamImpact:
    return DownstreamImpact(
        label, i.kind, i.reason_code, i.upstream, i.path, i.line, i.detail, i.replacement,
        i.upstream_path, i.upstream_line,
    )  # fmt: skip


def _watch_hits(files: Sequence[FileChange], globs: tuple[str, ...]) -> list[WatchHit]:
    """Hits on the changed paths, old names of renamed files included (moving out counts)."""
    if not globs:
        return []
    paths = list(dict.fromkeys(p for f in files for p in (f.old_path, f.path) if p))
    return [WatchHit(glob, path) for glob, path in match_watch(paths, globs)]


def _union(interests: list[Interest]) -> Interest:
    return Interest(
        frozenset().union(*(i.modules for i in interests)),
        frozenset().union(*(i.env for i in interests)),
        frozenset().union(*(i.flags for i in interests)),
    )
