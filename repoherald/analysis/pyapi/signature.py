"""Parameter lists of Python callables: how they changed, and which calls they break.

A signature is kept as canonical text — ``(self, a, b=1, *args, c, **kw)``,
annotations dropped, prefixed with ``@staticmethod`` or ``@classmethod`` when
the method is one — because that text is what a report shows and what a
cache can store. :func:`parse_signature` turns it back into a
:class:`Signature`; the checks below work on that structure, never on the text.

Both the upstream side (what a commit changed) and the downstream side (what a
call or an override passes) use this one model, so "the call was valid before
the commit and is not after it" is decided by a single binder that follows
Python's own rules for positional, keyword, ``*args`` and ``**kwargs``.
What a call or an override runs into is returned as language-neutral
:class:`~repoherald.models.Text` (``ds.sig.*`` keys), because it reaches the
report's "Affects your code" section and is worded there in the report's language.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from repoherald.analysis.pyapi.parse import parse_quietly
from repoherald.models import Text

POSITIONAL_ONLY = "posonly"
POSITIONAL = "pos"
KEYWORD_ONLY = "kwonly"

STATIC = "@staticmethod"
CLASS = "@classmethod"


@dataclass(frozen=True, slots=True)
class Param:
    """One named parameter; ``default`` is its source text, None when required."""

    name: str
    kind: str
    default: str | None


@dataclass(frozen=True, slots=True)
class Signature:
    """A parameter list plus how the callable is bound (``""``, static or class)."""

    params: tuple[Param, ...]
    varargs: str | None = None
    varkw: str | None = None
    flavour: str = ""

    @property
    def text(self) -> str:
        """Canonical text that :func:`parse_signature` reads back."""
        parts: list[str] = []
        for i, p in enumerate(self.params):
            if p.kind == KEYWORD_ONLY and (i == 0 or self.params[i - 1].kind != KEYWORD_ONLY):
                parts.append(f"*{self.varargs}" if self.varargs else "*")
            parts.append(p.name if p.default is None else f"{p.name}={p.default}")
            nxt = self.params[i + 1] if i + 1 < len(self.params) else None
            if p.kind == POSITIONAL_ONLY and (nxt is None or nxt.kind != POSITIONAL_ONLY):
                parts.append("/")
        if self.varargs and not any(p.kind == KEYWORD_ONLY for p in self.params):
            parts.append(f"*{self.varargs}")
        if self.varkw:
            parts.append(f"**{self.varkw}")
        body = f"({', '.join(parts)})"
        return f"{self.flavour} {body}" if self.flavour else body

    def bound(self, through_instance: bool) -> Signature:
        """The parameters a caller supplies: ``self``/``cls`` dropped when Python binds them.

        A classmethod always binds ``cls``; a plain method binds ``self`` only
        when reached through an instance or ``super()``, not ``Class.m(obj)``.
        """
        drop = self.flavour == CLASS or (self.flavour == "" and through_instance)
        if not drop or not self.params or self.params[0].kind == KEYWORD_ONLY:
            return Signature(self.params, self.varargs, self.varkw, STATIC)
        return Signature(self.params[1:], self.varargs, self.varkw, STATIC)

    def positional(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind != KEYWORD_ONLY)

    def named(self) -> dict[str, Param]:
        """Parameters a keyword argument can reach (positional-only ones cannot)."""
        return {p.name: p for p in self.params if p.kind != POSITIONAL_ONLY}


def from_arguments(args: ast.arguments, flavour: str = "") -> Signature:
    """The :class:`Signature` of a ``def``'s ``ast.arguments``."""
    params: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for i, arg in enumerate(positional):
        default = args.defaults[i - first_default] if i >= first_default else None
        kind = POSITIONAL_ONLY if i < len(args.posonlyargs) else POSITIONAL
        params.append(Param(arg.arg, kind, _source(default)))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(arg.arg, KEYWORD_ONLY, _source(kw_default)))
    return Signature(
        tuple(params),
        args.vararg.arg if args.vararg else None,
        args.kwarg.arg if args.kwarg else None,
        flavour,
    )


def parse_signature(text: str) -> Signature | None:
    """Read back :attr:`Signature.text` (or any ``(params)`` text); None if it is not one."""
    flavour = ""
    for prefix in (STATIC, CLASS):
        if text.startswith(prefix + " "):
            flavour, text = prefix, text[len(prefix) + 1 :]
    try:
        tree = parse_quietly(f"def _{text}: pass")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.FunctionDef):
        return None
    return from_arguments(node.args, flavour)


def _source(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)


# -- what changed --------------------------------------------------------------


def describe_change(old: Signature, new: Signature) -> list[str]:
    """Human-readable differences that matter to callers or overriders, in parameter order.

    Annotation-only edits produce nothing: they change no call. A parameter
    whose name vanished at the position where a new name appeared is a
    rename, not a removal plus an addition.
    """
    notes: list[str] = []
    old_by, new_by = {p.name: p for p in old.params}, {p.name: p for p in new.params}
    renamed = _renames(old, new)
    for p in old.params:
        if p.name not in new_by and p.name not in renamed:
            notes.append(f"removed parameter {p.name}")
    for p in new.params:
        if p.name in old_by or p.name in renamed.values():
            continue
        notes.append(
            f"added required parameter {p.name}"
            if p.default is None
            else f"added parameter {p.name}={p.default}"
        )
    notes.extend(f"renamed parameter {a} to {b}" for a, b in renamed.items())
    both = {p.name for p in old.positional()} & {p.name for p in new.positional()}
    if [p.name for p in old.positional() if p.name in both] != [
        p.name for p in new.positional() if p.name in both
    ]:
        notes.append("reordered positional parameters")
    for p in new.params:
        was = old_by.get(p.name)
        if was is None:
            continue
        if was.default != p.default:
            notes.append(f"default of {p.name}: {_show(was.default)} -> {_show(p.default)}")
        if was.kind != p.kind:
            notes.append(f"{p.name} became {_KIND_WORDS[p.kind]}")
    for attr, star in (("varargs", "*"), ("varkw", "**")):
        before, after = getattr(old, attr), getattr(new, attr)
        if bool(before) != bool(after):
            notes.append(f"{'removed' if before else 'added'} {star}{before or after}")
    if old.flavour != new.flavour:
        notes.append(f"binding: {old.flavour or 'method'} -> {new.flavour or 'method'}")
    return notes


_KIND_WORDS = {
    POSITIONAL_ONLY: "positional-only",
    POSITIONAL: "positional-or-keyword",
    KEYWORD_ONLY: "keyword-only",
}


def _show(default: str | None) -> str:
    return "(required)" if default is None else default


def _renames(old: Signature, new: Signature) -> dict[str, str]:
    """Old name -> new name where a positional slot changed its name and nothing else."""
    old_names, new_names = {p.name for p in old.params}, {p.name for p in new.params}
    renamed: dict[str, str] = {}
    for a, b in zip(old.positional(), new.positional(), strict=False):
        if a.name != b.name and a.name not in new_names and b.name not in old_names:
            renamed[a.name] = b.name
    return renamed


# -- what a call or an override runs into ----------------------------------------


@dataclass(frozen=True, slots=True)
class CallShape:
    """What a call site passes: positional count, keyword names, and any splats."""

    positional: int
    keywords: tuple[str, ...]
    star_args: bool = False
    star_kwargs: bool = False


def bind_problems(sig: Signature, call: CallShape) -> list[Text]:
    """Why ``call`` would raise TypeError against ``sig`` (empty when it binds).

    With ``*args`` or ``**kwargs`` splats the caller's real arguments are
    unknown, so only what is certain is checked: an explicit keyword the
    callee cannot take, and too many explicit positionals.
    """
    problems: list[Text] = []
    slots = sig.positional()
    if call.positional > len(slots) and sig.varargs is None:
        problems.append(Text("ds.sig.too_many", {"given": call.positional, "accepted": len(slots)}))
    filled = {p.name for p in slots[: call.positional]}
    named = sig.named()
    for kw in call.keywords:
        if kw in named:
            if kw in filled and not call.star_args:
                problems.append(Text("ds.sig.twice", {"name": kw}))
            filled.add(kw)
        elif sig.varkw is None:
            problems.append(Text("ds.sig.unexpected", {"name": kw}))
    if not (call.star_args or call.star_kwargs):
        problems.extend(
            Text("ds.sig.missing", {"name": p.name})
            for p in sig.params
            if p.default is None and p.name not in filled
        )
    return problems


def misbound_positionals(old: Signature, new: Signature, call: CallShape) -> list[Text]:
    """Positional arguments that now land in a different, still existing parameter."""
    if call.star_args:
        return []
    old_slots, new_slots = old.positional(), new.positional()
    old_names, new_names = {p.name for p in old.params}, {p.name for p in new.params}
    notes: list[Text] = []
    for i in range(min(call.positional, len(old_slots), len(new_slots))):
        a, b = old_slots[i].name, new_slots[i].name
        if a != b and a in new_names and b in old_names:
            notes.append(Text("ds.sig.misbound", {"n": i + 1, "new": b, "old": a}))
    return notes


def unpassed_defaults(old: Signature, new: Signature, call: CallShape) -> list[Text]:
    """Changed defaults this call relies on because it does not pass the parameter."""
    if call.star_kwargs:
        return []
    old_by = {p.name: p for p in old.params}
    passed = {p.name for p in new.positional()[: call.positional]} | set(call.keywords)
    notes: list[Text] = []
    for p in new.params:
        was = old_by.get(p.name)
        if was is None or p.name in passed or (call.star_args and p.kind != KEYWORD_ONLY):
            continue
        if was.default is not None and p.default is not None and was.default != p.default:
            notes.append(default_changed(p.name, was.default, p.default))
    return notes


def default_changed(name: str, old: str, new: str) -> Text:
    """``default of name: old -> new`` (a parameter, a field, an env var or a flag)."""
    return Text("ds.d.default", {"name": name, "old": old, "new": new})


def override_problems(old: Signature, new: Signature, override: Signature) -> list[Text]:
    """How an override written against ``old`` fails once the base method is ``new``.

    The base class's own callers follow ``new``: a parameter they now pass
    (added or renamed) must be accepted by the override, a parameter they no
    longer pass must not be required by it, and the positional order the
    override copied from ``old`` must still be the order they use.
    All three signatures are taken as bound (no ``self``).
    """
    notes: list[Text] = []
    mine = {p.name: p for p in override.params}
    old_names = {p.name for p in old.params}
    new_names = {p.name for p in new.params}
    for p in new.params:
        if p.name in old_names or p.name in mine:
            continue
        by_keyword = p.kind != POSITIONAL_ONLY and override.varkw is not None
        by_position = p.kind != KEYWORD_ONLY and override.varargs is not None
        if not (by_keyword or by_position):
            notes.append(Text("ds.sig.new_param", {"name": p.name}))
    for name in sorted(old_names - new_names):
        have = mine.get(name)
        if have is not None and have.default is None:
            notes.append(Text("ds.sig.still_requires", {"name": name}))
    both = {p.name for p in old.positional()} & {p.name for p in new.positional()}
    old_order = [p.name for p in old.positional() if p.name in both]
    new_order = [p.name for p in new.positional() if p.name in both]
    own_order = [p.name for p in override.positional() if p.name in both]
    if old_order != new_order and own_order == old_order and len(own_order) > 1:
        notes.append(Text("ds.sig.old_order", {"names": ", ".join(own_order)}))
    return notes
