"""Compare the two sides of one commit's Python files, module by module.

:class:`CommitFiles` holds the changed files of one commit and parses each side
on demand (through the extractor it is given, which caches by blob), because
most comparisons need only the modules a downstream refers to, while finding
where a vanished name went needs the new side of every other file.
:mod:`repoherald.analysis.surface.change` is the entry point; the environment and
flag comparisons live in :mod:`repoherald.analysis.surface.settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from repoherald.analysis.pyapi.signature import describe_change
from repoherald.analysis.surface import extract as sx
from repoherald.analysis.surface.extract import is_library_module, is_public_module, module_name
from repoherald.models import Message, Text

REMOVED = "removed"
MOVED = "moved"
RENAMED = "renamed"
MODULE_REMOVED = "module_removed"
MODULE_RENAMED = "module_renamed"
SIGNATURE = "signature"
METHOD_REMOVED = "method_removed"
ENV_REMOVED = "env_removed"
ENV_DEFAULT = "env_default"
FLAG_REMOVED = "flag_removed"
FLAG_RENAMED = "flag_renamed"
FLAG_DEFAULT = "flag_default"
FIELD_REMOVED = "field_removed"
FIELD_RENAMED = "field_renamed"
FIELD_DEFAULT = "field_default"
UNPARSED = "unparsed"

KINDS = (
    REMOVED,
    MOVED,
    RENAMED,
    MODULE_REMOVED,
    MODULE_RENAMED,
    SIGNATURE,
    METHOD_REMOVED,
    ENV_REMOVED,
    ENV_DEFAULT,
    FLAG_REMOVED,
    FLAG_RENAMED,
    FLAG_DEFAULT,
    FIELD_REMOVED,
    FIELD_RENAMED,
    FIELD_DEFAULT,
    UNPARSED,
)


@dataclass(frozen=True, slots=True)
class SurfaceChange:
    """One change to what downstream code can import, call, override, set or pass.

    ``module`` is the importable module (the *old* one for moves and renames),
    ``name`` the name inside it (``Class.method``, ``Class.field``, an env var,
    ``--flag``; empty for module kinds). ``old``/``new`` carry dotted paths for
    moves and renames, canonical signatures for ``signature`` (see
    :mod:`repoherald.analysis.pyapi.signature`) and default source text for the
    ``*_default`` kinds. ``path``/``line`` point into the *old* file for the
    removal kinds and into the *new* one otherwise. ``detail`` is a note for
    people reading the analysis; when ``certain`` is False it says why the
    change may not be real, a neutral :class:`~repoherald.models.Text`,
    because the report quotes it in its own language.
    """

    kind: str
    module: str
    name: str
    old: str
    new: str
    detail: Message
    path: str
    line: int
    certain: bool = True


Blob = bytes | str | Callable[[], bytes | None] | None
"""A file's content, or a function that reads it on first use (None: unreadable)."""


@dataclass(frozen=True, slots=True)
class FileVersions:
    """Both sides of one changed file.

    A ``None`` path means the file does not exist on that side (added or
    deleted); a path with ``None`` data means it exists but could not be read,
    and is reported as ``unparsed``. Content may be given as a function that
    reads it: most files of a commit are never read when a downstream
    ``Interest`` rules them out by path. ``old_id``/``new_id`` (blob SHAs) are
    optional and only used as cache keys.
    """

    old_path: str | None
    new_path: str | None
    old: Blob
    new: Blob
    old_id: str = ""
    new_id: str = ""


@dataclass(frozen=True, slots=True)
class Interest:
    """What a downstream uses, so a commit's untouched corners need not be parsed.

    ``modules`` holds every dotted prefix of every upstream name it refers to;
    ``env``/``flags`` the variable names and ``--flags`` it mentions.
    """

    modules: frozenset[str] = frozenset()
    env: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()


def is_python(fv: FileVersions) -> bool:
    """Whether either side of the file is a ``.py`` module."""
    return any(p is not None and p.endswith(".py") for p in (fv.old_path, fv.new_path))


def has_marker(data: bytes | str | None, markers: tuple[bytes, ...]) -> bool:
    """A cheap byte test that decides whether a file is worth parsing at all."""
    if data is None:
        return False
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    return any(m in raw for m in markers)


@dataclass(slots=True)
class CommitFiles:
    """One commit's files with lazily parsed sides, and the lookups comparisons need."""

    extract: Callable[[Callable[[], bytes | str | None], str, str], sx.ModuleSurface | None]
    """(content reader, path, blob id) -> extract; the reader is not called on a cache hit."""
    files: list[FileVersions]
    old_by_module: dict[str, FileVersions] = field(default_factory=dict)
    new_by_module: dict[str, FileVersions] = field(default_factory=dict)
    loaded: dict[tuple[int, bool], bytes | str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for fv in self.files:
            for path, table in (
                (fv.old_path, self.old_by_module),
                (fv.new_path, self.new_by_module),
            ):
                module = module_name(path) if path else None
                if module is not None:
                    table.setdefault(module, fv)

    def data(self, fv: FileVersions, new: bool) -> bytes | str | None:
        """The content of one side, read (once) when it is a reader function."""
        blob = fv.new if new else fv.old
        if not callable(blob):
            return blob
        key = (id(fv), new)
        if key not in self.loaded:
            self.loaded[key] = blob()
        return self.loaded[key]

    def side(self, fv: FileVersions, new: bool) -> sx.ModuleSurface | None:
        path, blob = (fv.new_path, fv.new_id) if new else (fv.old_path, fv.old_id)
        if path is None:
            return None
        return self.extract(lambda: self.data(fv, new), path, blob)

    def wanted(self, fv: FileVersions, interest: Interest | None) -> bool:
        if interest is None:
            return True
        modules = {module_name(p) for p in (fv.old_path, fv.new_path) if p}
        return bool(modules & interest.modules)

    def surface(self, module: str, new: bool) -> sx.ModuleSurface | None:
        table = self.new_by_module if new else self.old_by_module
        fv = table.get(module)
        return self.side(fv, new) if fv is not None else None

    def compare_module(self, fv: FileVersions) -> list[SurfaceChange]:
        assert fv.old_path is not None
        if not is_public_module(fv.old_path):
            return []
        module = module_name(fv.old_path) or ""
        old = self.side(fv, new=False)
        if old is None:
            return [_unparsed(module, fv.old_path, "old")]
        out: list[SurfaceChange] = []
        counterpart = self.new_by_module.get(module)
        if counterpart is None and fv.new_path is not None:
            counterpart = fv
            out.append(
                SurfaceChange(
                    MODULE_RENAMED,
                    module,
                    "",
                    module,
                    module_name(fv.new_path) or "",
                    "",
                    fv.old_path,
                    1,
                )
            )
        elif counterpart is None:
            out.append(SurfaceChange(MODULE_REMOVED, module, "", module, "", "", fv.old_path, 1))
        new = self.side(counterpart, new=True) if counterpart is not None else None
        if counterpart is not None and new is None:
            return [*out, _unparsed(module, counterpart.new_path or "", "new")]
        out.extend(_compare_names(self, old, new))
        return out

    def destination(self, name: str, module: str) -> str | None:
        """Where a vanished ``name`` appeared during this commit, as ``module.name``.

        A definition is preferred over a re-export, a public module over a
        private one; ties go to the first module name, so the answer is stable.
        """
        found: list[tuple[bool, bool, str]] = []
        for other, fv in self.new_by_module.items():
            if other == module or fv.new_path is None or not is_library_module(fv.new_path):
                continue
            if not has_marker(self.data(fv, True), (name.encode("utf-8"),)):
                continue  # cannot bind the name without spelling it
            surf = self.side(fv, new=True)
            if surf is None or name not in surf.names:
                continue
            before = self.surface(other, new=False)
            if before is not None and name in before.names:
                continue
            private = not is_public_module(fv.new_path)
            found.append((private, surf.names[name].kind == sx.IMPORT, other))
        return f"{min(found)[2]}.{name}" if found else None

    def resolve(
        self, entry: sx.Entry, owner: sx.ModuleSurface, new: bool, hops: int = 3
    ) -> tuple[sx.Entry, sx.ModuleSurface] | None:
        """Follow a re-export to its definition within the commit's files.

        Returns the definition and the module that holds it; None when the
        chain leaves the commit (the definition did not change) or loops.
        """
        while entry.kind == sx.IMPORT:
            module, _, name = entry.target.rpartition(".")
            surf = self.surface(module, new)
            nxt = surf.names.get(name) if surf is not None else None
            if nxt is None or surf is None or hops == 0:
                return None
            entry, owner, hops = nxt, surf, hops - 1
        return entry, owner

    def has_method(
        self, cls: str, method: str, owner: sx.ModuleSurface, depth: int = 0
    ) -> bool | None:
        """Whether class ``cls`` (dotted) has ``method`` after the commit; None when unknown."""
        if cls in _TRIVIAL_BASES or cls.rpartition(".")[2] in _TRIVIAL_BASES:
            return False
        module, _, name = cls.rpartition(".")
        surf = owner if module == owner.module else self.surface(module, new=True)
        entry = surf.names.get(name) if surf is not None else None
        found = self.resolve(entry, surf, new=True) if entry is not None and surf else None
        if found is None or found[0].cls is None or depth > 8:
            return None
        cls_info, home = found[0].cls, found[1]
        if method in cls_info.methods:
            return True
        answers = [self.has_method(b, method, home, depth + 1) for b in cls_info.bases]
        if any(a is True for a in answers):
            return True
        return False if all(a is False for a in answers) else None


_TRIVIAL_BASES = frozenset({"object", "ABC", "Generic", "Protocol", "NamedTuple", "TypedDict"})


def _unparsed(module: str, path: str, side: str) -> SurfaceChange:
    return SurfaceChange(UNPARSED, module, "", "", "", f"{side} version does not parse", path, 0)


# -- names, classes, fields ---------------------------------------------------------------


def _compare_names(
    commit: CommitFiles, old: sx.ModuleSurface, new: sx.ModuleSurface | None
) -> list[SurfaceChange]:
    out: list[SurfaceChange] = []
    for name, was in old.names.items():
        if name.startswith("_"):
            continue
        now = new.names.get(name) if new is not None else None
        if now is None:
            out.extend(_vanished(commit, old, new, name, was))
            continue
        if was.kind == now.kind == sx.IMPORT:
            continue  # both re-exports: the definition's own module reports its changes
        before = commit.resolve(was, old, new=False)
        after = commit.resolve(now, new, new=True) if new is not None else None
        if before is None or after is None:
            continue
        (was_def, _), (now_def, home) = before, after
        if was_def.signature is not None and now_def.signature is not None:
            notes = describe_change(was_def.signature, now_def.signature)
            if notes:
                out.append(
                    SurfaceChange(
                        SIGNATURE,
                        old.module,
                        name,
                        was_def.signature.text,
                        now_def.signature.text,
                        "; ".join(notes),
                        home.path,
                        now_def.line,
                    )
                )
        elif was_def.cls is not None and now_def.cls is not None:
            out.extend(_compare_class(commit, old, home, name, was_def.cls, now_def.cls))
    return out


def _vanished(
    commit: CommitFiles,
    old: sx.ModuleSurface,
    new: sx.ModuleSurface | None,
    name: str,
    was: sx.Entry,
) -> list[SurfaceChange]:
    """A public name the module no longer binds: moved, renamed or removed."""
    dotted = f"{old.module}.{name}"
    if was.kind == sx.IMPORT and was.target == dotted:
        return []  # ``from . import sub`` binds a submodule; the file itself says if it went
    dest = commit.destination(name, new.module if new is not None else old.module)
    if dest is not None:
        return [SurfaceChange(MOVED, old.module, name, dotted, dest, "", old.path, was.line)]
    if new is None and not old.path.endswith("__init__.py"):
        return []  # the module is gone; MODULE_REMOVED says so once
    if new is None:
        # A package's __init__ is gone but its submodules may remain, so the
        # names it defined are reported one by one.
        return [SurfaceChange(REMOVED, old.module, name, dotted, "", "", old.path, was.line)]
    twin = _renamed_to(old, new, name, was)
    if twin is not None:
        return [
            SurfaceChange(
                RENAMED, old.module, name, dotted, f"{new.module}.{twin}", "", old.path, was.line
            )
        ]
    notes: list[Text] = []
    if was.kind == sx.IMPORT:
        notes.append(Text("ds.why.imported_from", {"module": was.target.rpartition(".")[0]}))
    if new.dynamic:
        notes.append(Text("ds.why.module_getattr"))
    detail: Message = Text("join.sentences", {"items": tuple(notes)}) if notes else ""
    return [
        SurfaceChange(
            REMOVED, old.module, name, dotted, "", detail, old.path, was.line, not new.dynamic
        )
    ]


def _renamed_to(
    old: sx.ModuleSurface, new: sx.ModuleSurface, name: str, was: sx.Entry
) -> str | None:
    """The one new name in the same module with the same shape, if exactly one exists."""
    if was.kind not in (sx.FUNCTION, sx.CLASS_KIND):
        return None
    candidates = []
    for other, now in new.names.items():
        if other in old.names or other.startswith("_") or now.kind != was.kind:
            continue
        if was.signature is not None and now.signature is not None:
            same = was.signature.params == now.signature.params
        else:
            same = (
                was.cls is not None
                and now.cls is not None
                and bool(was.cls.methods)
                and was.cls.methods.keys() == now.cls.methods.keys()
            )
        if same:
            candidates.append(other)
    return candidates[0] if len(candidates) == 1 else None


def _compare_class(
    commit: CommitFiles,
    old: sx.ModuleSurface,
    new: sx.ModuleSurface,
    cname: str,
    before: sx.ClassInfo,
    after: sx.ClassInfo,
) -> list[SurfaceChange]:
    out: list[SurfaceChange] = []
    for m, om in before.methods.items():
        if m.startswith("__") and not m.endswith("__"):
            continue  # name-mangled: no subclass can override it
        nm = after.methods.get(m)
        qual = f"{cname}.{m}"
        if nm is None:
            if m.startswith("__"):
                continue  # a dunder falls back to object's or a base's
            inherited = [commit.has_method(b, m, new) for b in after.bases]
            if any(a is True for a in inherited):
                continue
            certain = all(a is False for a in inherited)
            detail: Message = "" if certain else Text("ds.why.base_outside")
            out.append(
                SurfaceChange(
                    METHOD_REMOVED,
                    old.module,
                    qual,
                    om.signature.text,
                    "",
                    detail,
                    old.path,
                    om.line,
                    certain,
                )
            )
        elif not (om.is_property or nm.is_property):
            notes = describe_change(om.signature, nm.signature)
            if notes:
                out.append(
                    SurfaceChange(
                        SIGNATURE,
                        old.module,
                        qual,
                        om.signature.text,
                        nm.signature.text,
                        "; ".join(notes),
                        new.path,
                        nm.line,
                    )
                )
    if before.fields is not None and after.fields is not None:
        out.extend(_compare_fields(old, new, cname, before.fields, after.fields))
    return out


def _compare_fields(
    old: sx.ModuleSurface,
    new: sx.ModuleSurface,
    cname: str,
    before: dict[str, sx.Field],
    after: dict[str, sx.Field],
) -> list[SurfaceChange]:
    out: list[SurfaceChange] = []
    added = [n for n in after if n not in before and not n.startswith("_")]
    for name, was in before.items():
        now = after.get(name)
        qual = f"{cname}.{name}"
        if name.startswith("_"):
            continue
        if now is None:
            out.append(_field_gone(old, cname, name, was, {n: after[n] for n in added}))
        elif now.default != was.default:
            old_default, new_default = _default_text(was.default), _default_text(now.default)
            out.append(
                SurfaceChange(
                    FIELD_DEFAULT,
                    old.module,
                    qual,
                    old_default,
                    new_default,
                    "",
                    new.path,
                    now.line,
                )
            )
    return out


def _field_gone(
    old: sx.ModuleSurface, cname: str, name: str, was: sx.Field, added: dict[str, sx.Field]
) -> SurfaceChange:
    """A field that left the class: renamed when exactly one new field has its type and default."""
    qual = f"{cname}.{name}"
    twins = [
        n for n, f in added.items() if (f.annotation, f.default) == (was.annotation, was.default)
    ]
    if len(twins) == 1:
        return SurfaceChange(
            FIELD_RENAMED, old.module, qual, qual, f"{cname}.{twins[0]}", "", old.path, was.line
        )
    default = _default_text(was.default)
    return SurfaceChange(FIELD_REMOVED, old.module, qual, default, "", "", old.path, was.line)


def _default_text(default: str | None) -> str:
    return "(required)" if default is None else default
