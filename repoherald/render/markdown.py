"""Render a report view as Markdown, GitHub-flavoured.

Everything the page says comes from :mod:`repoherald.render.view` (built once
per report, shared with the JSON twin) and the catalogue; the template only
lays it out. All untrusted text passes through :mod:`repoherald.render.escape`
filters in the template.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2

from repoherald.i18n import t
from repoherald.render import escape
from repoherald.render.invisible import strip_invisible
from repoherald.render.view import ReportView, generated_text

INSIGHT_KEYS = ("architecture", "performance", "security", "maintainability", "compatibility")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("repoherald", "render/templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    env.filters["inline"] = escape.inline
    env.filters["cell"] = escape.cell
    env.filters["rich"] = escape.rich
    env.filters["rich_cell"] = escape.rich_cell
    env.filters["code"] = escape.code
    return env


def stamp_line(lang: str, generated_at: datetime) -> str:
    """The one line that differs between two runs of the same day."""
    return f"> {generated_text(lang, generated_at)}"


def generated_line(view: ReportView) -> str:
    """The view's "generated" line (:func:`stamp_line`)."""
    return f"> {view.generated}"


def render_markdown(view: ReportView) -> str:
    """The report as GitHub-flavoured Markdown (UTF-8 text, LF line ends)."""

    def tr(key: str, **kw: Any) -> str:
        return t(view.lang, key, **kw)

    text = (
        _env()
        .get_template("report.md.j2")
        .render(
            t=tr,
            v=view,
            generated_line=generated_line(view),
            insight_keys=INSIGHT_KEYS,
        )
    )
    text = re.sub(r"\n{3,}", "\n\n", strip_invisible(text))
    return text.rstrip("\n") + "\n"
