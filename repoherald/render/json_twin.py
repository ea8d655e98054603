"""The machine-readable twin of a report: the same data, as JSON.

It carries exactly what the Markdown shows (plus the raw facts), never an
e-mail address, and is deterministic apart from ``generated_at``.
"""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

from repoherald.models import DayReport, Importance, to_jsonable
from repoherald.render.markdown import build_view, local_time, scrub

SCHEMA_VERSION = 1


def report_to_dict(report: DayReport, view: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-ready dict of the report (anchors match the Markdown twin).

    ``view`` is the Markdown view model when the caller already built it.
    """
    tz = ZoneInfo(report.tz_name)
    view = view if view is not None else build_view(report)
    repos = []
    for section, sv in zip(report.sections, view["sections"], strict=True):
        commits = []
        for entry, ev in zip(section.entries, sv.entries, strict=True):
            c, f, a = entry.commit, entry.facts, entry.analysis
            facts = to_jsonable(f)
            commits.append(
                {
                    "sha": c.sha,
                    "short_sha": c.sha[:7],
                    "title": ev.title,
                    "author": ev.author,
                    "author_time": local_time(c.author_time, tz).isoformat(),
                    "commit_time": local_time(c.commit_time, tz).isoformat(),
                    "url": ev.url,
                    "pr_number": f.pr_number,
                    "pr_url": ev.pr_url,
                    "anchor": ev.anchor,
                    "decode_errors": c.decode_errors,
                    "analysis": to_jsonable(a),
                    "facts": facts,
                }
            )
        counts = {imp.value: 0 for imp in Importance}
        for entry in section.entries:
            counts[entry.analysis.importance.value] += 1
        repos.append(
            {
                "name": section.name,
                "branch": section.branch,
                "web_url": section.web_url,
                "error": section.error,
                "anchor": sv.anchor,
                "stats": {
                    "commits": len(section.entries),
                    "importance": counts,
                    "files_changed": sum(e.facts.files_changed for e in section.entries),
                    "added": sum(e.facts.added for e in section.entries),
                    "deleted": sum(e.facts.deleted for e in section.entries),
                },
                "commits": commits,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "date": report.day.isoformat(),
        "tz": report.tz_name,
        "window": {"start": report.start.isoformat(), "end": report.end.isoformat()},
        "lang": report.lang,
        "analysers": list(report.analysers),
        "tool_version": report.version,
        "generated_at": report.generated_at.astimezone(tz).isoformat(timespec="seconds"),
        "repos": repos,
        "llm_usage": {
            "commits": sum(1 for e in report.entries if e.analysis.analyser.startswith("llm/")),
            "prompt_tokens": sum(e.analysis.usage[0] for e in report.entries),
            "completion_tokens": sum(e.analysis.usage[1] for e in report.entries),
        },
    }


def render_json(report: DayReport, view: dict[str, Any] | None = None) -> str:
    """The JSON twin as text: UTF-8, compact, LF line end.

    Compact separators keep the C encoder (``indent`` forces the slow
    pure-Python one, which dominated the cost of a cached re-run).
    """
    text = json.dumps(report_to_dict(report, view), ensure_ascii=False, separators=(",", ":"))
    return scrub(text) + "\n"
