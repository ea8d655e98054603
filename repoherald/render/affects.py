"""The "⚠️ Affects your code" part of a repository's section, as a view.

Built by :func:`repoherald.render.view.build_view` from the section's
:class:`~repoherald.models.DownstreamCheck` and the impacts and watch hits on
its entries: grouped by downstream project, worded in the report's language,
each downstream ``file:line`` linked when the project's web page is known,
each item pointing at the anchor of the commit it comes from. Paths, names
and details come from the reader's and the upstream's code: they stay plain
text here (backticks mark code) and the renderers escape them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from repoherald.i18n import CATALOGUES, localise, t
from repoherald.models import (
    Arg,
    DownstreamCheck,
    DownstreamImpact,
    DownstreamProject,
    Entry,
    Message,
    Text,
)
from repoherald.redact import redact
from repoherald.render import escape

SHOWN = 50
"""Items listed per downstream project in the Markdown; the JSON twin lists them all."""
WATCH_SHOWN = 5
"""Paths shown per commit and watch glob; the JSON twin lists them all."""

_PLAIN_CODES = frozenset(
    {"import_fails", "attribute_fails", "patch_target_gone", "env_removed", "flag_removed"}
)
"""Reason codes whose detail may only say again what the name, the reason and the
replacement say; such a detail (one of :data:`_RESTATING`) is not shown."""
_RESTATING = frozenset(
    {
        "ds.d.removed",
        "ds.d.moved",
        "ds.d.renamed",
        "ds.d.undefined",
        "ds.d.env_not_read",
        "ds.d.flag_gone",
        "ds.d.flag_renamed",
    }
)
"""Details that restate the item (``X was removed``, ``X moved to Y``, ``X is no longer
read``); one with a remark (``ds.d.noted``) says more and is shown."""


@dataclass(frozen=True, slots=True)
class CommitRef:
    """The commit an item comes from: what to show and where its heading is."""

    sha: str
    short_sha: str
    title: str
    anchor: str


@dataclass(frozen=True, slots=True)
class ImpactView:
    """One downstream line a commit breaks or changes."""

    kind: str
    """``breaks`` or ``changes``."""
    kind_label: str
    code: str
    text: str
    """What changed upstream and how it reaches this line (backticks mark code)."""
    upstream: str
    replacement: str
    detail: str
    """The specifics in the report's language (``text`` leaves out a detail that only
    restates it; this field always has it)."""
    detail_message: Message
    """The same, language-neutral (a :class:`~repoherald.models.Text`), for the JSON twin."""
    path: str
    line: int
    where: str
    """``path:line``."""
    url: str | None
    upstream_path: str
    upstream_line: int
    commit: CommitRef


@dataclass(frozen=True, slots=True)
class ProjectView:
    """One downstream project: what was checked, what was not, and the lines affected."""

    label: str
    name: str
    summary: str
    """Counts of breaks and changes, files checked, and what could not be checked."""
    note: str
    files: int
    lines: int
    not_checked: dict[str, int]
    excluded: tuple[str, ...]
    impacts: tuple[ImpactView, ...]
    more: str = ""
    """What the Markdown says about the impacts beyond :data:`SHOWN` (empty: none)."""

    @property
    def shown(self) -> tuple[ImpactView, ...]:
        return self.impacts[:SHOWN]


@dataclass(frozen=True, slots=True)
class WatchView:
    """The changed paths of one commit that one of the reader's globs matches."""

    glob: str
    paths: tuple[str, ...]
    text: str
    """The glob and the first few paths (backticks mark code)."""
    commit: CommitRef


@dataclass(frozen=True, slots=True)
class AffectsView:
    """The whole "Affects your code" part of one repository's section."""

    title: str
    anchor: str
    intro: str
    """Which upstream packages the downstream code was searched for (empty with watch only)."""
    packages: tuple[str, ...]
    projects: tuple[ProjectView, ...]
    watch: tuple[str, ...]
    watch_title: str
    watch_none: str
    """The sentence shown when no commit touched a watched path."""
    watch_hits: tuple[WatchView, ...]
    upstream_unparsed: int
    upstream_note: str


def build_affects(
    check: DownstreamCheck,
    entries: Sequence[Entry],
    refs: Sequence[CommitRef],
    lang: str,
    anchor: str,
) -> AffectsView:
    """The view of ``check`` and of the entries' impacts; ``refs`` match ``entries`` one to one."""
    projects = tuple(
        _project(p, [(e, r) for e, r in zip(entries, refs, strict=True)], lang)
        for p in check.projects
    )
    hits = tuple(
        _watch(glob, paths, ref, lang)
        for e, ref in zip(entries, refs, strict=True)
        for glob, paths in _by_glob(e).items()
    )
    return AffectsView(
        title=t(lang, "ds.title"),
        anchor=anchor,
        intro=t(lang, "ds.packages", packages=_ticks(check.packages)) if check.projects else "",
        packages=check.packages,
        projects=projects,
        watch=check.watch,
        watch_title=t(lang, "ds.watch"),
        watch_none=t(lang, "ds.watch_none", globs=_ticks(check.watch)),
        watch_hits=hits,
        upstream_unparsed=check.upstream_unparsed,
        upstream_note=t(lang, "ds.upstream_unparsed", n=check.upstream_unparsed)
        if check.upstream_unparsed
        else "",
    )


def _project(p: DownstreamProject, pairs: list[tuple[Entry, CommitRef]], lang: str) -> ProjectView:
    order = {ref.sha: n for n, (_, ref) in enumerate(pairs)}
    found = [
        (i, ref) for e, ref in pairs for i in e.impacts if i.project == p.label
    ]  # newest commit first, as the matcher sorted each commit's impacts
    found.sort(key=lambda ir: (ir[0].kind != "breaks", ir[0].path, ir[0].line, order[ir[1].sha]))
    impacts = tuple(_impact(i, ref, p.file_url, lang) for i, ref in found)
    breaks = sum(1 for i in impacts if i.kind == "breaks")
    parts = [t(lang, "ds.summary", breaks=breaks, changes=len(impacts) - breaks)]
    if p.files or not p.note:
        parts.append(t(lang, "ds.checked", files=f"{p.files:,}", lines=f"{p.lines:,}"))
    if p.not_checked:
        reasons = t(lang, "join.list").join(
            f"{_label(lang, 'ds.nc.', reason)} {n}" for reason, n in p.not_checked
        )
        n = sum(n for _, n in p.not_checked)
        parts.append(t(lang, "ds.not_checked", n=n, reasons=reasons))
    return ProjectView(
        label=redact(p.label),
        name=redact(p.name),
        summary=" · ".join(parts),
        note=redact(localise(lang, p.note)),
        files=p.files,
        lines=p.lines,
        not_checked=dict(p.not_checked),
        excluded=p.excluded,
        impacts=impacts,
        more=t(lang, "ds.more", n=len(impacts) - SHOWN) if len(impacts) > SHOWN else "",
    )


def _impact(i: DownstreamImpact, ref: CommitRef, base: str | None, lang: str) -> ImpactView:
    what = _label(lang, "ds.code.", i.code)
    if i.replacement:
        text = t(lang, "ds.item_moved", what=what, upstream=_tick(i.upstream),
                 replacement=_tick(i.replacement))  # fmt: skip
    else:
        text = t(lang, "ds.item", what=what, upstream=_tick(i.upstream))
    detail = localise(lang, i.detail)
    if detail and not _restates(i):
        text = t(lang, "ds.item_detail", item=text, detail=detail)
    return ImpactView(
        kind=i.kind,
        kind_label=t(lang, f"ds.kind.{i.kind}"),
        code=i.code,
        text=redact(text),
        upstream=i.upstream,
        replacement=i.replacement,
        detail=redact(detail),
        detail_message=_redacted(i.detail),
        path=redact(i.path),
        line=i.line,
        where=redact(f"{i.path}:{i.line}"),
        url=_file_url(base, i.path, i.line),
        upstream_path=i.upstream_path,
        upstream_line=i.upstream_line,
        commit=ref,
    )


def _restates(i: DownstreamImpact) -> bool:
    return (
        i.code in _PLAIN_CODES
        and isinstance(i.detail, Text)
        and i.detail.code in _RESTATING
        and i.detail.args.get("name") == i.upstream
    )


def _redacted(message: Message) -> Message:
    """The message with :func:`redact` applied to every piece of data inside it."""
    return redact(message) if isinstance(message, str) else _redacted_text(message)


def _redacted_text(text: Text) -> Text:
    return Text(text.code, {k: _redacted_arg(v) for k, v in text.args.items()})


def _redacted_arg(value: Arg) -> Arg:
    if isinstance(value, tuple):
        return tuple(_redacted_text(v) for v in value)
    if isinstance(value, Text):
        return _redacted_text(value)
    return redact(value) if isinstance(value, str) else value


def _by_glob(entry: Entry) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for hit in entry.watched:
        out.setdefault(hit.glob, []).append(hit.path)
    return out


def _watch(glob: str, paths: list[str], ref: CommitRef, lang: str) -> WatchView:
    shown = t(lang, "join.list").join(_tick(p) for p in paths[:WATCH_SHOWN])
    if len(paths) > WATCH_SHOWN:
        shown += f" (+{len(paths) - WATCH_SHOWN})"
    text = t(lang, "ds.watch_item", glob=_tick(glob), paths=shown)
    return WatchView(glob, tuple(paths), redact(text), ref)


def _file_url(base: str | None, path: str, line: int) -> str | None:
    """``<base>/<path>#L<line>``, or None when no base is known or the result is not plain."""
    if base is None:
        return None
    return escape.url(f"{base}/{quote(path, safe='/')}#L{line}")


def _label(lang: str, prefix: str, code: str) -> str:
    """A reason's words; a code this version has no words for is shown as it is."""
    catalogue = CATALOGUES[lang]
    return catalogue.get(prefix + code) or catalogue.get(prefix + "other") or code


def _tick(text: str) -> str:
    return text if "`" in text else f"`{text}`"


def _ticks(items: Sequence[str]) -> str:
    return ", ".join(_tick(x) for x in items)
