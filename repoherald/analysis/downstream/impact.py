"""Which lines of a downstream project one upstream commit breaks or changes.

:func:`match` joins a commit's :class:`~repoherald.analysis.surface.change.SurfaceChange`
list with a :class:`~repoherald.analysis.downstream.index.DownstreamIndex` and
returns :class:`Impact` records. Every impact names the upstream thing and the
downstream ``path:line``; nothing is reported on a name alone.

``breaks`` means the downstream code will fail or silently stop working: an
import or attribute that no longer exists, a call that no longer binds or
binds differently, an override the base class no longer calls or calls with
other arguments, a patch of a name that is gone, an environment variable or
flag that is no longer read. ``changes`` means it still runs but behaves
differently: a default it relies on changed, or a break that its own
``try``/``except``, ``TYPE_CHECKING`` block or ``getattr`` default absorbs,
or a removal the upstream side cannot be sure of.

:func:`match_watch` is the checkout-less variant: upstream path globs with
``**`` semantics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from repoherald.analysis.downstream import index as ds
from repoherald.analysis.pyapi.signature import (
    CallShape,
    Signature,
    bind_problems,
    default_changed,
    misbound_positionals,
    override_problems,
    parse_signature,
    unpassed_defaults,
)
from repoherald.analysis.surface import change as sf
from repoherald.errors import UsageError
from repoherald.models import Arg, Message, Text

BREAKS = "breaks"
CHANGES = "changes"

_NAME_KINDS = frozenset({sf.REMOVED, sf.MOVED, sf.RENAMED, sf.METHOD_REMOVED})
_MODULE_KINDS = frozenset({sf.MODULE_REMOVED, sf.MODULE_RENAMED})
_IMPORT_ERRORS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "*"}
)
_ATTR_ERRORS = frozenset({"AttributeError", "ImportError", "Exception", "BaseException", "*"})
_CALL_ERRORS = frozenset({"TypeError", "Exception", "BaseException", "*"})


@dataclass(frozen=True, slots=True)
class Impact:
    """One downstream line an upstream commit breaks or changes.

    ``upstream`` is the dotted name, env var or ``--flag`` that changed;
    ``replacement`` its new name when it moved or was renamed. ``reason_code``
    is stable and language-neutral (the renderer localises it); ``detail``
    gives the specifics (names, signatures, defaults) as a neutral
    :class:`~repoherald.models.Text` with ``ds.d.*`` / ``ds.sig.*`` keys, so
    one match serves reports in every language. ``upstream_path`` and
    ``upstream_line`` point into the commit (see :class:`SurfaceChange`).
    """

    kind: str
    reason_code: str
    upstream: str
    path: str
    line: int
    detail: Text
    replacement: str = ""
    upstream_path: str = ""
    upstream_line: int = 0


def match(
    changes: Sequence[sf.SurfaceChange],
    index: ds.DownstreamIndex,
    aliases: Mapping[str, str] | None = None,
) -> list[Impact]:
    """Every downstream use ``changes`` break or change, de-duplicated and sorted.

    ``aliases`` (from :func:`repoherald.analysis.surface.change.reexports`) maps
    re-exported names to their definitions (``vllm.LLM`` ->
    ``vllm.entrypoints.llm.LLM``), so a downstream that imports the short
    path still meets a signature change reported at the defining module.
    """
    table = _Changes(changes, aliases or {})
    out: list[Impact] = []
    if table.names:
        for ref in index.refs:
            out.extend(table.for_ref(ref))
        for patch in index.patches:
            out.extend(table.for_patch(patch))
    if table.names or table.signatures or table.fields:
        for call in index.calls:
            out.extend(table.for_call(call))
    if table.names or table.signatures:
        for cls in index.classes:
            out.extend(table.for_class(cls))
    if table.env or table.flags:
        own = set(index.own_flags)
        for use in index.strings:
            if not (use.context == "flag" and use.value in own):
                out.extend(table.for_string(use))
    unique = {(i.path, i.line, i.upstream, i.reason_code): i for i in out}
    return sorted(
        unique.values(), key=lambda i: (i.path, i.line, i.kind != BREAKS, i.upstream, i.reason_code)
    )


def _impact(
    kind: str,
    code: str,
    change: sf.SurfaceChange,
    path: str,
    line: int,
    detail: Text,
    what: str = "",
) -> Impact:
    upstream = what or (f"{change.module}.{change.name}" if change.name else change.module)
    if not what and change.kind.startswith(("env_", "flag_")):
        upstream = change.name
    replacement = change.new if change.kind in (sf.MOVED, sf.RENAMED, sf.MODULE_RENAMED) else ""
    if change.kind in (sf.FLAG_RENAMED, sf.FIELD_RENAMED):
        replacement = change.new
    return Impact(kind, code, upstream, path, line, detail, replacement, change.path, change.line)


class _Changes:
    """The commit's changes indexed by the dotted names and strings downstream code uses."""

    def __init__(self, changes: Sequence[sf.SurfaceChange], aliases: Mapping[str, str]) -> None:
        self.aliases = aliases
        self._spellings: dict[str, list[str]] = {}
        self.names: dict[str, sf.SurfaceChange] = {}
        self.signatures: dict[str, sf.SurfaceChange] = {}
        self.fields: dict[str, list[sf.SurfaceChange]] = {}
        self.env: dict[str, list[sf.SurfaceChange]] = {}
        self.flags: dict[str, list[sf.SurfaceChange]] = {}
        for ch in changes:
            dotted = f"{ch.module}.{ch.name}" if ch.name else ch.module
            if ch.kind in _NAME_KINDS or ch.kind in _MODULE_KINDS:
                self.names.setdefault(dotted, ch)
            elif ch.kind == sf.SIGNATURE:
                self.signatures[dotted] = ch
            elif ch.kind in (sf.FIELD_REMOVED, sf.FIELD_RENAMED, sf.FIELD_DEFAULT):
                self.fields.setdefault(f"{ch.module}.{ch.name.rpartition('.')[0]}", []).append(ch)
            elif ch.kind in (sf.ENV_REMOVED, sf.ENV_DEFAULT):
                self.env.setdefault(ch.name, []).append(ch)
                if ch.kind == sf.ENV_REMOVED and ch.certain:
                    self.names.setdefault(dotted, ch)  # ``envs.VLLM_X`` through a registry
            elif ch.kind in (sf.FLAG_REMOVED, sf.FLAG_RENAMED, sf.FLAG_DEFAULT):
                self.flags.setdefault(ch.name, []).append(ch)

    def spellings(self, target: str) -> list[str]:
        """The target as written, then as defined (through the re-export aliases)."""
        known = self._spellings.get(target)
        if known is None:
            known = self._spellings[target] = sf.spellings(target, self.aliases)
        return known

    def name_change(self, target: str) -> sf.SurfaceChange | None:
        """The most specific removal, move or rename that ``target`` runs into."""
        for spelling in self.spellings(target):
            parts = spelling.split(".")
            for i in range(len(parts), 0, -1):
                ch = self.names.get(".".join(parts[:i]))
                if ch is None:
                    continue
                if ch.kind in _MODULE_KINDS and ch.path.endswith("__init__.py") and i < len(parts):
                    continue  # a package's submodules are files of their own
                return ch
        return None

    # -- per record ---------------------------------------------------------------------------

    def for_ref(self, ref: ds.Ref) -> list[Impact]:
        ch = self.name_change(ref.target)
        if ch is None:
            return []
        if ref.how in (ds.ATTR, ds.GETATTR) and _within(ref.base, _dotted(ch)):
            return []  # the import that bound the base already fails; it is reported there
        errors = _IMPORT_ERRORS if ref.how in (ds.IMPORT, ds.STRING) else _ATTR_ERRORS
        code = {ds.IMPORT: "import_fails", ds.STRING: "import_fails"}.get(
            ref.how, "attribute_fails"
        )
        return [self._name_impact(ch, code, ref.path, ref.line, _guarded(ref.guard, errors))]

    def for_patch(self, patch: ds.Patch) -> list[Impact]:
        ch = self.name_change(patch.target)
        if ch is None:
            return []
        return [
            self._name_impact(
                ch, "patch_target_gone", patch.path, patch.line, _guarded(patch.guard, _ATTR_ERRORS)
            )
        ]

    def _name_impact(
        self, ch: sf.SurfaceChange, code: str, path: str, line: int, guarded: bool
    ) -> Impact:
        detail, what = _name_detail(ch), _dotted(ch)
        if guarded:
            note = Text("ds.d.fallback", {"detail": detail})
            return _impact(CHANGES, "guarded", ch, path, line, note, what)
        if not ch.certain:
            note = _noted(detail, ch.detail)
            return _impact(CHANGES, "maybe_" + code, ch, path, line, note, what)
        return _impact(BREAKS, code, ch, path, line, detail, what)

    def for_call(self, call: ds.CallSite) -> list[Impact]:
        out: list[Impact] = []
        shape = CallShape(call.positional, call.keywords, call.star_args, call.star_kwargs)
        guarded = _guarded(call.guard, _CALL_ERRORS)
        for spelling in self.spellings(call.target):
            gone = self.names.get(spelling) if call.via_super else None
            if gone is not None:
                out.append(self._name_impact(gone, "super_call_fails", call.path, call.line, False))
            bound_self = call.via_super or call.instance
            for key, bound in ((spelling, bound_self), (f"{spelling}.__init__", True)):
                sig = self.signatures.get(key)
                if sig is not None:
                    out.extend(_call_impacts(sig, shape, bound, call, guarded))
            for fch in self.fields.get(spelling, []):
                out.extend(_field_impacts(fch, shape, call))
            if out:
                break
        return out

    def for_class(self, cls: ds.Subclass) -> list[Impact]:
        out: list[Impact] = []
        for base in cls.bases:
            for spelling in self.spellings(base):
                found = [_override_impact(self, spelling, m, cls) for m in cls.methods]
                hits = [i for i in found if i is not None]
                if hits:
                    out.extend(hits)
                    break
        return out

    def for_string(self, use: ds.StringUse) -> list[Impact]:
        table = self.env if use.context == "env" else self.flags
        out = []
        for ch in table.get(use.value, []):
            if ch.kind == sf.ENV_REMOVED:
                kind, code = (
                    (BREAKS, "env_removed") if ch.certain else (CHANGES, "env_read_removed")
                )
                detail = _noted(Text("ds.d.env_not_read", {"name": ch.name}), ch.detail)
            elif ch.kind == sf.FLAG_RENAMED:
                kind, code = BREAKS, "flag_removed"
                detail = Text("ds.d.flag_renamed", {"name": ch.name, "new": ch.new})
            elif ch.kind == sf.FLAG_REMOVED:
                kind, code = BREAKS, "flag_removed"
                detail = Text("ds.d.flag_gone", {"name": ch.name})
            else:
                kind, code = CHANGES, ch.kind + "_changed"
                detail = default_changed(ch.name, ch.old, ch.new)
            out.append(_impact(kind, code, ch, use.path, use.line, detail))
        return out


def _override_impact(
    table: _Changes, base: str, method: ds.MethodDef, cls: ds.Subclass
) -> Impact | None:
    key = f"{base}.{method.name}"
    removed = table.names.get(key)
    if removed is not None and removed.kind == sf.METHOD_REMOVED:
        detail = Text("ds.d.override_gone", {"name": key})
        if not removed.certain:
            return _impact(
                CHANGES,
                "maybe_override_orphaned",
                removed,
                cls.path,
                method.line,
                _noted(detail, removed.detail),
                key,
            )
        return _impact(BREAKS, "override_orphaned", removed, cls.path, method.line, detail, key)
    ch = table.signatures.get(key)
    if ch is None:
        return None
    old, new, mine = (parse_signature(s) for s in (ch.old, ch.new, method.signature))
    if old is None or new is None or mine is None:
        return None
    problems = override_problems(old.bound(True), new.bound(True), mine.bound(True))
    if not problems:
        return None
    detail = Text(
        "ds.d.override_mismatch",
        {
            "method": f"{cls.qualname}.{method.name}",
            "problems": _sentences(problems),
            "signature": f"{key}{ch.new}",
        },
    )
    return _impact(BREAKS, "override_mismatch", ch, cls.path, method.line, detail, key)


def _call_impacts(
    ch: sf.SurfaceChange, shape: CallShape, through_instance: bool, call: ds.CallSite, guarded: bool
) -> list[Impact]:
    old, new = parse_signature(ch.old), parse_signature(ch.new)
    if old is None or new is None:
        return []
    before: Signature = old.bound(through_instance)
    after: Signature = new.bound(through_instance)
    if bind_problems(before, shape):
        return []  # it did not bind before either: we resolved the wrong thing, say nothing
    where = f"{ch.module}.{ch.name}{ch.new}"
    broken = bind_problems(after, shape) or misbound_positionals(before, after, shape)
    code = "super_call_fails" if call.via_super else "call_fails"
    if broken:
        detail = Text("ds.d.call", {"problems": _sentences(broken), "signature": where})
        if guarded:
            code, detail = "guarded", Text("ds.d.handler", {"detail": detail})
        return [_impact(CHANGES if guarded else BREAKS, code, ch, call.path, call.line, detail)]
    defaults = unpassed_defaults(before, after, shape)
    if defaults:
        detail = _sentences(defaults)
        return [_impact(CHANGES, "default_changed", ch, call.path, call.line, detail)]
    return []


def _field_impacts(ch: sf.SurfaceChange, shape: CallShape, call: ds.CallSite) -> list[Impact]:
    field = ch.name.rpartition(".")[2]
    if ch.kind in (sf.FIELD_REMOVED, sf.FIELD_RENAMED) and field in shape.keywords:
        args: dict[str, Arg] = {"field": field, "cls": f"{ch.module}.{ch.name.rpartition('.')[0]}"}
        if ch.kind == sf.FIELD_RENAMED:
            detail = Text("ds.d.field_renamed", {**args, "new": ch.new})
        else:
            detail = Text("ds.d.field_gone", args)
        return [_impact(BREAKS, "field_removed", ch, call.path, call.line, detail)]
    if ch.kind == sf.FIELD_DEFAULT and field not in shape.keywords and not shape.star_kwargs:
        detail = default_changed(ch.name, ch.old, ch.new)
        return [_impact(CHANGES, "field_default_changed", ch, call.path, call.line, detail)]
    return []


def _dotted(ch: sf.SurfaceChange) -> str:
    return ch.module if ch.kind in _MODULE_KINDS else f"{ch.module}.{ch.name}"


def _name_detail(ch: sf.SurfaceChange) -> Text:
    dotted = _dotted(ch)
    if ch.kind in (sf.MOVED, sf.RENAMED, sf.MODULE_RENAMED):
        code = "ds.d.moved" if ch.kind == sf.MOVED else "ds.d.renamed"
        return Text(code, {"name": dotted, "new": ch.new})
    if ch.kind == sf.ENV_REMOVED:
        return Text("ds.d.undefined", {"name": dotted})
    return Text("ds.d.removed", {"name": dotted})


def _noted(detail: Text, why: Message) -> Text:
    """``detail (why)``: why the upstream side is not sure (nothing added when it is)."""
    return Text("ds.d.noted", {"detail": detail, "note": why}) if why else detail


def _sentences(parts: Sequence[Text]) -> Text:
    """Several problems of one line, joined the way the report's language joins clauses."""
    return Text("join.sentences", {"items": tuple(parts)})


def _within(base: str, dotted: str) -> bool:
    return base == dotted or base.startswith(dotted + ".")


def _guarded(guard: tuple[str, ...], errors: frozenset[str]) -> bool:
    return ds.TYPE_CHECKING in guard or ds.HAS_DEFAULT in guard or bool(errors & set(guard))


# -- watch globs --------------------------------------------------------------------------


def match_watch(paths: Iterable[str], globs: Sequence[str]) -> list[tuple[str, str]]:
    """``(glob, path)`` for every changed upstream path a watch glob matches.

    Globs are anchored at the repository root and compared segment by
    segment: ``*``, ``?`` and ``[...]`` stay within one path segment, ``**``
    spans any number of segments (including none), so ``vllm/attention/**``
    matches every file below that directory and ``**/config.py`` every
    ``config.py``. Results follow the order of ``globs``, then of ``paths``.
    Raises :class:`~repoherald.errors.UsageError` for a glob that can never match.
    """
    compiled = [(glob, _compile(glob)) for glob in globs]
    path_list = [p.strip("/") for p in paths]
    return [
        (glob, path)
        for glob, pattern in compiled
        for path in path_list
        if _match(pattern, tuple(path.split("/")))
    ]


def _compile(glob: str) -> tuple[str, ...]:
    text = glob.strip()
    if not text or text.startswith("/") or "\\" in text:
        raise UsageError(
            f"watch glob {glob!r} is not a relative path pattern: write it like 'vllm/attention/**'"
        )
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UsageError(f"watch glob {glob!r} contains '..': write it relative to the repository")
    collapsed: list[str] = []
    for part in parts:
        if not (part == "**" and collapsed and collapsed[-1] == "**"):
            collapsed.append(part)
    return tuple(collapsed)


@lru_cache(maxsize=4096)
def _match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(rest, parts[1:])
