"""An index of how a downstream project uses its upstream packages.

Built once per run from the reader's own checkout (see
:mod:`repoherald.sources.checkout`, which walks the directory and calls
:func:`index_source` for each file), then matched against every upstream
commit's :class:`~repoherald.analysis.surface.change.SurfaceChange` list by
:mod:`repoherald.analysis.downstream.impact`. Everything in it is a plain frozen record
with a ``path`` and ``line``, and :meth:`DownstreamIndex.to_dict` /
:meth:`DownstreamIndex.from_dict` round-trip it through JSON so the store can
cache it by the checkout's HEAD and dirty state.

What could not be checked is recorded, never dropped: files that do not
parse or are too large, star-imports of an upstream module, and
``getattr``/``setattr`` on an upstream object with a computed name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from repoherald.analysis.surface.change import Interest, spellings

INDEX_VERSION = 3
"""Bump when the records or what is recorded change, so cached indexes are rebuilt."""

# How a Ref reaches its target.
IMPORT = "import"
ATTR = "attr"
GETATTR = "getattr"
STRING = "string"

# Not-checked reasons.
SYNTAX = "syntax"
TOO_LARGE = "too_large"
UNREADABLE = "unreadable"
STAR_IMPORT = "star_import"
DYNAMIC_GETATTR = "dynamic_getattr"
DYNAMIC_SETATTR = "dynamic_setattr"
SYMLINK = "symlink"
BAD_NAME = "bad_name"
"""A file or directory whose name is not UTF-8 (shown with U+FFFD in its place)."""
TOO_DEEP = "too_deep"
"""A class whose chain of downstream base classes is too long to follow."""

TYPE_CHECKING = "TYPE_CHECKING"
"""A guard: the code only runs under a type checker."""
HAS_DEFAULT = "default"
"""A guard: ``getattr(obj, "name", default)`` cannot raise."""


@dataclass(frozen=True, slots=True)
class Ref:
    """A place that names an upstream module, class, function or attribute.

    ``target`` is the absolute dotted name (``vllm.a.B.method``). ``base`` is
    the name the chain starts from (what an imported name is bound to), empty
    for imports and strings. ``guard`` lists the exceptions caught around it
    (``"*"`` for a bare except) plus ``TYPE_CHECKING``/``default`` markers.
    """

    target: str
    path: str
    line: int
    how: str
    base: str = ""
    guard: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call of an upstream callable: what it passes.

    ``via_super`` marks ``super().name(...)`` (and then ``target`` is the
    upstream base's method); a class called by name has its own dotted name
    as ``target`` and means its constructor.
    """

    target: str
    path: str
    line: int
    positional: int
    keywords: tuple[str, ...]
    star_args: bool = False
    star_kwargs: bool = False
    via_super: bool = False
    instance: bool = False
    """Called on an instance (``x = Cls(...); x.method(...)``): ``self`` is bound."""
    guard: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MethodDef:
    """A method a downstream class defines; ``signature`` as in :mod:`signature`."""

    name: str
    signature: str
    line: int


@dataclass(frozen=True, slots=True)
class SuperCall:
    method: str
    line: int
    positional: int
    keywords: tuple[str, ...]
    star_args: bool = False
    star_kwargs: bool = False


@dataclass(frozen=True, slots=True)
class LocalClass:
    """Any class the downstream defines, before upstream ancestry is known."""

    qualname: str
    path: str
    line: int
    bases: tuple[str, ...]
    methods: tuple[MethodDef, ...]
    super_calls: tuple[SuperCall, ...]


@dataclass(frozen=True, slots=True)
class Subclass:
    """A downstream class with upstream ancestors (``bases``: the nearest upstream ones)."""

    qualname: str
    path: str
    line: int
    bases: tuple[str, ...]
    methods: tuple[MethodDef, ...]


@dataclass(frozen=True, slots=True)
class Patch:
    """A monkey-patch of an upstream name: ``how`` is assign, setattr, patch or patch.object."""

    target: str
    path: str
    line: int
    how: str
    guard: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StringUse:
    """A string literal that may name an upstream env var (``env``) or flag (``flag``)."""

    value: str
    path: str
    line: int
    context: str


@dataclass(frozen=True, slots=True)
class NotChecked:
    """Code the index could not see into; ``line`` is 0 for a whole file."""

    path: str
    line: int
    reason: str
    detail: str = ""


@dataclass(slots=True)
class FileIndex:
    """What one file contributes; merged into a :class:`DownstreamIndex`."""

    path: str
    lines: int = 0
    refs: list[Ref] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    classes: list[LocalClass] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)
    strings: list[StringUse] = field(default_factory=list)
    own_flags: list[str] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DownstreamIndex:
    """Everything a downstream checkout does with its upstream packages."""

    root: str
    packages: tuple[str, ...]
    files: int
    """Python files read, parsed or not (see ``prefiltered``)."""
    lines: int
    """Lines of the parsed files."""
    refs: tuple[Ref, ...] = ()
    calls: tuple[CallSite, ...] = ()
    classes: tuple[Subclass, ...] = ()
    patches: tuple[Patch, ...] = ()
    strings: tuple[StringUse, ...] = ()
    own_flags: tuple[str, ...] = ()
    """Flags the downstream defines itself; a string use of one of them is its own."""
    not_checked: tuple[NotChecked, ...] = ()
    excluded: tuple[str, ...] = ()
    """Directories left out by policy (virtualenvs, dot-directories, build output)."""
    prefiltered: int = 0
    """Files read but not parsed: their bytes cannot name an upstream package, one of
    its variables or flags, or a downstream class with upstream ancestors."""
    version: int = INDEX_VERSION

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (lists and scalars only)."""
        plain: dict[str, Any] = _plain(asdict(self))
        return plain

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DownstreamIndex:
        """Rebuild an index written by :meth:`to_dict`; raises ValueError on another version."""
        if data.get("version") != INDEX_VERSION:
            raise ValueError(
                f"downstream index version {data.get('version')} is not {INDEX_VERSION}"
            )
        return DownstreamIndex(
            root=str(data["root"]),
            packages=tuple(data["packages"]),
            files=int(data["files"]),
            lines=int(data["lines"]),
            refs=_records(Ref, data["refs"]),
            calls=_records(CallSite, data["calls"]),
            classes=tuple(
                Subclass(
                    c["qualname"],
                    c["path"],
                    c["line"],
                    tuple(c["bases"]),
                    _records(MethodDef, c["methods"]),
                )
                for c in data["classes"]
            ),
            patches=_records(Patch, data["patches"]),
            strings=_records(StringUse, data["strings"]),
            own_flags=tuple(data["own_flags"]),
            not_checked=_records(NotChecked, data["not_checked"]),
            excluded=tuple(data["excluded"]),
            prefiltered=int(data["prefiltered"]),
        )

    def interest(self, aliases: Mapping[str, str] | None = None) -> Interest:
        """What :class:`~repoherald.analysis.surface.change.SurfaceDiffer` needs to compare.

        Pass the same ``aliases`` as to :func:`~repoherald.analysis.downstream.impact.match`:
        a name used through a re-export must bring its defining module in.
        """
        targets: list[str] = [r.target for r in self.refs]
        targets += [c.target for c in self.calls]
        targets += [p.target for p in self.patches]
        targets += [b for c in self.classes for b in c.bases]
        modules: set[str] = set()
        for target in set(targets):
            for spelling in spellings(target, aliases or {}):
                parts = spelling.split(".")
                modules.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        own = set(self.own_flags)
        return Interest(
            frozenset(modules),
            frozenset(s.value for s in self.strings if s.context == "env"),
            frozenset(s.value for s in self.strings if s.context == "flag" and s.value not in own),
        )

    def not_checked_count(self) -> int:
        """Files and places the index could not see into."""
        return len(self.not_checked)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _records(cls: type[Any], rows: Iterable[dict[str, Any]]) -> tuple[Any, ...]:
    names = {f.name for f in fields(cls)}
    out = []
    for row in rows:
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in row.items() if k in names}
        out.append(cls(**kwargs))
    return tuple(out)


def build_index(
    root: str,
    packages: Sequence[str],
    parts: Iterable[FileIndex],
    excluded: Sequence[str] = (),
    not_checked: Sequence[NotChecked] = (),
    prefiltered: int = 0,
) -> DownstreamIndex:
    """Merge per-file indexes and resolve which classes descend from upstream ones.

    ``excluded`` and ``not_checked`` carry what the directory walk itself left
    out (virtualenvs, unreadable directories, symlinked files).

    Subclassing often spans files (a plugin's base runner in one module, its
    variants in others), so ancestry is resolved here, over every class the
    downstream defines, and a ``super().m(...)`` call is attributed to the
    upstream method it really reaches: the nearest class in the bases that
    defines ``m``, which may be the downstream's own.
    """
    files = sorted(parts, key=lambda f: f.path)
    local = {c.qualname: c for f in files for c in f.classes}
    resolver = _Ancestry(local, tuple(packages))
    classes: list[Subclass] = []
    calls = [c for f in files for c in f.calls]
    too_deep: list[NotChecked] = []
    for cls in sorted(local.values(), key=lambda c: (c.path, c.line, c.qualname)):
        try:
            ups = resolver.upstream_bases(cls.qualname)
            supers = _super_calls(resolver, cls) if ups else []
        except RecursionError:
            # A chain of a thousand subclasses: this class is not checked, the index stands.
            too_deep.append(NotChecked(cls.path, cls.line, TOO_DEEP, cls.qualname))
            continue
        if not ups:
            continue
        classes.append(Subclass(cls.qualname, cls.path, cls.line, ups, cls.methods))
        calls.extend(supers)
    return DownstreamIndex(
        root=root,
        packages=tuple(packages),
        files=len(files) + prefiltered,
        lines=sum(f.lines for f in files),
        refs=tuple(r for f in files for r in f.refs),
        calls=tuple(sorted(calls, key=lambda c: (c.path, c.line, c.target))),
        classes=tuple(classes),
        patches=tuple(p for f in files for p in f.patches),
        strings=tuple(s for f in files for s in f.strings),
        own_flags=tuple(sorted({flag for f in files for flag in f.own_flags})),
        not_checked=tuple(
            sorted(
                [*not_checked, *too_deep, *(n for f in files for n in f.not_checked)],
                key=lambda n: (n.path, n.line, n.reason),
            )
        ),
        excluded=tuple(sorted(excluded)),
        prefiltered=prefiltered,
    )


_TRIVIAL_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})


def descendant_names(classes: Iterable[LocalClass], packages: Sequence[str]) -> set[str]:
    """Simple names of downstream classes that may descend from an upstream class.

    Approximate on purpose (bases compared by their last name part): it only
    decides which further files are worth parsing; :func:`build_index`
    resolves ancestry exactly.
    """
    pending = list(classes)
    names: set[str] = set()
    grew = True
    while grew:
        grew = False
        for cls in pending:
            simple = cls.qualname.rpartition(".")[2]
            if simple in names:
                continue
            if any(
                b.partition(".")[0] in packages or b.rpartition(".")[2] in names for b in cls.bases
            ):
                names.add(simple)
                grew = True
    return names


def _super_calls(resolver: _Ancestry, cls: LocalClass) -> list[CallSite]:
    """The ``super().m(...)`` calls of ``cls`` that reach an upstream method, as call sites."""
    out = []
    for sc in cls.super_calls:
        target = resolver.super_target(cls.qualname, sc.method)
        if target is not None:
            shape = (sc.positional, sc.keywords, sc.star_args, sc.star_kwargs)
            out.append(CallSite(target, cls.path, sc.line, *shape, via_super=True))
    return out


class _Ancestry:
    """Upstream ancestry of downstream classes, across files, cycle-safe."""

    def __init__(self, local: dict[str, LocalClass], packages: tuple[str, ...]) -> None:
        self._local = local
        self._packages = packages
        self._bases: dict[str, tuple[str, ...]] = {}
        """Resolved upstream bases: a chain defined base first is then resolved one step
        at a time, not walked again (and deeper) for every class in it."""
        self._suffix: dict[str, str] = {}
        for qualname in local:
            parts = qualname.split(".")
            for i in range(1, len(parts)):
                self._suffix.setdefault(".".join(parts[i:]), qualname)

    def _is_upstream(self, name: str) -> bool:
        return name.partition(".")[0] in self._packages

    def _find(self, name: str) -> LocalClass | None:
        """A downstream class by dotted name, or by a suffix when its package root differs."""
        return self._local.get(name) or self._local.get(self._suffix.get(name, ""))

    def upstream_bases(self, qualname: str) -> tuple[str, ...]:
        """The nearest upstream classes ``qualname`` descends from, through downstream ones.

        Walked with an explicit stack, bases before the classes built on
        them, so a chain of a thousand subclasses is neither a
        ``RecursionError`` nor walked again for every class in it. A cycle
        (only possible in code that does not run) is cut where it closes.
        """
        entered: set[str] = set()
        stack = [qualname]
        while stack:
            current = stack[-1]
            if current in self._bases:
                stack.pop()
                continue
            parents = self._parents(current)
            if current not in entered:
                entered.add(current)
                todo = (p for p in parents if p is not None and p not in entered)
                stack.extend(p for p in todo if p not in self._bases)
                continue
            stack.pop()
            out: list[str] = []
            for base, parent in zip(self._bases_of(current), parents, strict=True):
                if parent is None:
                    out.extend((base,) if self._is_upstream(base) else ())
                else:
                    out.extend(self._bases.get(parent, ()))
            self._bases[current] = tuple(dict.fromkeys(out))
        return self._bases.get(qualname, ())

    def _bases_of(self, qualname: str) -> tuple[str, ...]:
        cls = self._local.get(qualname)
        return tuple(cls.bases) if cls is not None else ()

    def _parents(self, qualname: str) -> list[str | None]:
        """For each base: the downstream class it names (None: upstream, or unknown)."""
        out: list[str | None] = []
        for base in self._bases_of(qualname):
            parent = None if self._is_upstream(base) else self._find(base)
            out.append(parent.qualname if parent is not None else None)
        return out

    def super_target(self, qualname: str, method: str) -> str | None:
        """The upstream ``Base.method`` that ``super().method`` in ``qualname`` reaches."""
        cls = self._local.get(qualname)
        return self._first_definer(cls.bases, method, frozenset({qualname})) if cls else None

    def _first_definer(self, bases: Sequence[str], method: str, seen: frozenset[str]) -> str | None:
        """Depth first through the bases, in order, with an explicit stack (chains of any
        length). A level ends when a base may define ``method`` itself (a third-party
        base, or the downstream's own class): the search goes on with the level above."""
        visited = set(seen)
        levels = [iter(bases)]
        while levels:
            base = next(levels[-1], None)
            if base is None:
                levels.pop()
                continue
            if self._is_upstream(base):
                return f"{base}.{method}"
            parent = self._find(base)
            if parent is None and base.rpartition(".")[2] in _TRIVIAL_BASES:
                continue
            if parent is None or any(m.name == method for m in parent.methods):
                levels.pop()  # a third-party base, or the downstream's own class, answers
                continue
            if parent.qualname in visited:
                continue
            visited.add(parent.qualname)
            levels.append(iter(parent.bases))
        return None
