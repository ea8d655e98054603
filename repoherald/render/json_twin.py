"""The machine-readable twin of a report: the same data, as JSON.

It carries exactly what the Markdown shows (plus the raw facts), read from
the same :class:`~repoherald.render.view.ReportView`, never an e-mail
address, and is deterministic apart from ``generated_at``.
"""

from __future__ import annotations

import json
from typing import Any

from repoherald.emails import hide_emails
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


def report_to_dict(view: ReportView) -> dict[str, Any]:
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


def render_json(view: ReportView) -> str:
    """The JSON twin as text: UTF-8, compact, LF line end.

    Compact separators keep the C encoder (``indent`` forces the slow
    pure-Python one, which dominated the cost of a cached re-run). The
    invisible-character filter runs on the finished text, so every field —
    the raw analysis and facts too — is covered; none of those characters
    is JSON syntax, and ``ensure_ascii=False`` writes them unescaped.
    """
    text = json.dumps(report_to_dict(view), ensure_ascii=False, separators=(",", ":"))
    return hide_emails(strip_invisible(text)) + "\n"
