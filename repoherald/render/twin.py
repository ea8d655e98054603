"""The machine-readable twin of a report: the same data, as JSON, written and read here only.

It carries exactly what the Markdown shows (plus the raw facts), read from
the same :class:`~repoherald.render.view.ReportView`, never an e-mail
address, and is deterministic apart from ``generated_at``.

:func:`write` turns a view into the twin's text; :func:`read` turns a twin
(of a day, or of a weekly roll-up) back into a :class:`Twin`, the typed
model every reader uses (digests, the index, roll-ups, e-mail subjects), and
:func:`read_stamp` reads just what the archive needs of an old twin. A twin
carries ``schema_version``: one written by a newer repoherald, in a format
this one does not know, is refused with one clear error rather than read
wrongly. Fields a reader does not use are kept as they are (``extra``), so a
roll-up built from day twins copies them through.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import from_json

from repoherald.emails import hide_emails
from repoherald.errors import PublishError
from repoherald.render.affects import AffectsView, CommitRef, ImpactView
from repoherald.render.invisible import strip_invisible
from repoherald.render.view import (
    CommitView,
    CorrectionView,
    RelatedView,
    ReportView,
    SectionView,
)
from repoherald.store.codec import to_jsonable

SCHEMA_VERSION = 1
"""The twin's format version: bump it when a reader of the old format would misread the new."""


_M = TypeVar("_M", bound=BaseModel)


class TwinError(PublishError):
    """A twin cannot be read: damaged, or written by a newer repoherald."""


class _Part(BaseModel):
    """A part of the twin: the fields readers use are typed, the others are kept as they are."""

    model_config = ConfigDict(extra="allow", frozen=True)


class TwinAnalysis(_Part):
    importance: str = "low"
    reasons: list[Any] = []


class TwinCommit(_Part):
    sha: str = ""
    title: str = ""
    url: str | None = None
    pr_url: str | None = None
    analysis: TwinAnalysis | None = None
    report_date: dt.date | None = None
    """Set in a weekly roll-up: the day whose report the commit is from."""


class TwinImpact(_Part):
    kind: str = ""
    sha: str | None = None


class TwinProject(_Part):
    impacts: list[TwinImpact] = []


class TwinDownstream(_Part):
    projects: list[TwinProject] = []


class TwinStats(_Part):
    commits: int
    importance: dict[str, int]


class TwinRepo(_Part):
    name: str
    source_id: str | None = None
    branch: str | None = None
    error: str | None = None
    stale_since: str | None = None
    stats: TwinStats | None = None
    commits: list[TwinCommit] = []
    downstream: TwinDownstream | None = None


class Twin(_Part):
    """A day's twin (what :func:`write` wrote) or a weekly roll-up's (``kind`` ``week``)."""

    schema_version: KnownVersion
    kind: Literal["day", "week"] = "day"
    date: dt.date
    lang: str
    generated_at: str | None = None
    week_start: dt.date | None = None
    days_reported: int = 1
    repos: list[TwinRepo] = []


def _known_version(version: int) -> int:
    if version > SCHEMA_VERSION:
        raise ValueError(_NEWER)
    return version


_NEWER = "newer"
KnownVersion = Annotated[int, AfterValidator(_known_version)]
"""``schema_version`` of a format this repoherald reads."""


class _RepoId(BaseModel):
    source_id: str | None = None


class TwinStamp(BaseModel):
    """What the archive reads of a twin already on disk: whose it is, and when it was made."""

    schema_version: KnownVersion
    lang: str | None = None
    generated_at: str | None = None
    repos: list[_RepoId] = []

    @property
    def source_ids(self) -> list[str | None]:
        return [r.source_id for r in self.repos]


class TwinHead(BaseModel):
    """The fields at the top of a twin, before its repositories: read without the rest."""

    schema_version: KnownVersion
    lang: str | None = None
    generated_at: str | None = None


HEAD_BYTES = 4096
"""The top-level fields before ``repos`` fit in this many bytes of a twin."""


def _parse(model: type[_M], data: str | bytes, head: bool = False) -> _M:
    """``data`` as ``model``, or a :class:`TwinError` that says what to do.

    With ``head``, only the first :data:`HEAD_BYTES` are parsed, as a partial
    document (a twin can be megabytes; its head is all the content hash needs).
    """
    try:
        if head:
            text = data if isinstance(data, str) else data[:HEAD_BYTES].decode("utf-8", "ignore")
            return model.model_validate(from_json(text[:HEAD_BYTES], allow_partial=True))
        return model.model_validate_json(data)
    except ValidationError as e:
        newer = [
            err for err in e.errors() if err["loc"] == ("schema_version",) and _NEWER in err["msg"]
        ]
        if newer:
            raise TwinError(
                f"the report's JSON is of a newer format (version {newer[0]['input']}; this"
                f" repoherald reads up to {SCHEMA_VERSION}): upgrade repoherald"
            ) from None
        raise TwinError("the report's JSON is damaged: run that day again") from None
    except ValueError:  # not JSON at all (from_json)
        raise TwinError("the report's JSON is damaged: run that day again") from None


def write_week(week: Twin) -> str:
    """A weekly roll-up's twin as text: indented, keys sorted, the fields it was given only."""
    data = week.model_dump(mode="json", exclude_unset=True)
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def read(data: str | bytes) -> Twin:
    """A twin's text (a day's or a roll-up's) as a :class:`Twin`; :class:`TwinError` if not one."""
    return _parse(Twin, data)


def read_head(data: str | bytes) -> TwinHead:
    """The top-level fields of a twin (format, language, ``generated_at``) from its head."""
    return _parse(TwinHead, data, head=True)


def read_stamp(data: str | bytes) -> TwinStamp:
    """Only the identity and ``generated_at`` of a twin (no model of its commits is built)."""
    return _parse(TwinStamp, data)


def _report_dict(view: ReportView) -> dict[str, Any]:
    """A JSON-ready dict of the report (anchors match the Markdown twin)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "date": view.day.isoformat(),
        "tz": view.tz_name,
        "window": {"start": view.start.isoformat(), "end": view.end.isoformat()},
        "lang": view.lang,
        "analysers": list(view.analysers),
        "judged_by": {
            "rules_only": view.judged.rules_only,
            "models": list(view.judged.models),
            "model_commits": view.judged.by_model,
            "commits": view.judged.commits,
        },
        "tool_version": view.version,
        "generated_at": view.generated_at.isoformat(timespec="seconds"),
        "as_of": view.as_of.isoformat(timespec="seconds") if view.as_of else None,
        "repos": [_repo(s) for s in view.sections],
        "llm_usage": {
            "commits": view.usage.commits,
            "prompt_tokens": view.usage.prompt_tokens,
            "completion_tokens": view.usage.completion_tokens,
        },
    }


def _repo(s: SectionView) -> dict[str, Any]:
    out = {
        "name": s.name,
        "source_id": s.identity or None,
        "branch": s.branch,
        "web_url": s.web_url,
        "error": s.error,
        "notes": list(s.notes),
        "stale_since": s.stale_since,
        "anchor": s.anchor,
        "stats": {
            "commits": s.stats.commits,
            "importance": {imp.value: n for imp, n in s.stats.importance.items()},
            "files_changed": s.stats.files_changed,
            "added": s.stats.added,
            "deleted": s.stats.deleted,
        },
        "commits": [_commit(c) for c in s.commits],
    }
    if s.affects is not None:
        out["downstream"] = _affects(s.affects)
    return out


def _affects(a: AffectsView) -> dict[str, Any]:
    """Everything "Affects your code" shows, by downstream project, plus the watch hits."""
    return {
        "anchor": a.anchor,
        "packages": list(a.packages),
        "watch": list(a.watch),
        "upstream_unparsed": a.upstream_unparsed,
        "projects": [
            {
                "name": p.name,
                "path": p.label,
                "files": p.files,
                "lines": p.lines,
                "not_checked": p.not_checked,
                "excluded": list(p.excluded),
                "note": p.note,
                "impacts": [_impact(i) for i in p.impacts],
            }
            for p in a.projects
        ],
        "watch_hits": [
            {"glob": w.glob, "paths": list(w.paths), **_commit_ref(w.commit)} for w in a.watch_hits
        ],
    }


def _impact(i: ImpactView) -> dict[str, Any]:
    return {
        "kind": i.kind,
        "reason_code": i.code,
        "reason": i.text,
        "upstream": i.upstream,
        "replacement": i.replacement,
        "detail": i.detail,
        "detail_message": to_jsonable(i.detail_message),
        "path": i.path,
        "line": i.line,
        "url": i.url,
        "upstream_path": i.upstream_path,
        "upstream_line": i.upstream_line,
        **_commit_ref(i.commit),
    }


def _commit_ref(c: CommitRef) -> dict[str, Any]:
    return {"sha": c.sha, "commit_anchor": c.anchor}


def _commit(c: CommitView) -> dict[str, Any]:
    return {
        "sha": c.sha,
        "short_sha": c.short_sha,
        "title": c.title,
        "author": c.author,
        "author_time": c.author_time.isoformat(),
        "commit_time": c.commit_time.isoformat(),
        "url": c.url,
        "pr_number": c.pr_number,
        "pr_url": c.pr_url,
        "pr_labels": list(c.pr_labels),
        "anchor": c.anchor,
        "decode_errors": c.decode_errors,
        "patches_withheld": list(c.patches_withheld),
        "files_truncated": c.files_truncated,
        "analysis": to_jsonable(c.analysis),
        "correction": _correction(c.correction) if c.correction else None,
        "related": [_related(r) for r in c.related],
        "facts": to_jsonable(c.facts),
    }


def _related(r: RelatedView) -> dict[str, Any]:
    """A linked commit of another (or the same) day: what it did to this one, or this to it."""
    return {"kind": r.kind, "sha": r.sha, "title": r.title, "day": r.day, "url": r.url}


def _correction(k: CorrectionView) -> dict[str, Any]:
    """A reader's correction, beside ``analysis`` (which it never changes)."""
    return {
        "importance": k.importance.value,
        "change_type": k.change_type.value if k.change_type else None,
        "reason": k.reason,
        "marked_at": k.marked_at,
    }


def write(view: ReportView) -> str:
    """The JSON twin as text: UTF-8, compact, LF line end.

    Compact separators keep the C encoder (``indent`` forces the slow
    pure-Python one, which dominated the cost of a cached re-run). The
    invisible-character filter runs on the finished text, so every field —
    the raw analysis and facts too — is covered; none of those characters
    is JSON syntax, and ``ensure_ascii=False`` writes them unescaped.
    """
    text = json.dumps(_report_dict(view), ensure_ascii=False, separators=(",", ":"))
    return hide_emails(strip_invisible(text)) + "\n"
