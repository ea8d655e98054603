"""Where a report lives in the archive: the path template and the file names it produces.

The template is user input (``[report] path``), so it is checked when the
configuration is read — a bad one must not cost a whole analysed day at
write time — and filled by our own substitution rather than ``str.format``,
which would allow ``{name.__class__}`` and friends. Only the documented
fields exist; they take no format spec, conversion, attribute or index.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from repoherald.config.templates import check_template, path_pieces, template_validator
from repoherald.errors import ConfigError
from repoherald.i18n import DEFAULT_LANGUAGE

__all__ = [
    "UNTAGGED_LANG",
    "check_template",
    "fill_template",
    "lang_suffix",
    "report_path",
    "safe_component",
    "template_validator",
]
"""``check_template`` and ``template_validator`` live in :mod:`repoherald.config.templates`
(the configuration checks the template while reading the file); re-exported for the archive."""


def safe_component(name: str) -> str:
    """A file-name-safe version of a repository or report name (never empty)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")
    return cleaned[:80] or "report"


def fill_template(template: str, name: str, day: date) -> str:
    """The template with its fields replaced; ``name`` is made file-name-safe first."""
    try:
        pieces = path_pieces(template)
    except ValueError as exc:
        raise ConfigError(f"report path template {template!r}: {exc}") from None
    values = {
        "year": f"{day.year:04d}",
        "month": f"{day.month:02d}",
        "day": f"{day.day:02d}",
        "date": day.isoformat(),
        "name": safe_component(name),
    }
    return "".join(lit + (values[field] if field else "") for lit, field in pieces)


UNTAGGED_LANG = DEFAULT_LANGUAGE
"""The language whose reports have no language tag in the archive's file names.

``run`` writes the archive with the default language (:mod:`repoherald.i18n`)
as its main language whatever the report language, so ``2026-08-20.md`` is
in it (Chinese) and ``2026-08-20.en.md`` English."""


def lang_suffix(lang: str, main: str = UNTAGGED_LANG) -> str:
    """What a report in ``lang`` adds to its file name before ``.md``: ``""`` or ``".en"``."""
    return "" if lang == main else f".{safe_component(lang)}"


def report_path(
    out_dir: Path, template: str, name: str, day: date, suffix: str, tag: str | None = None
) -> Path:
    """``out/<template>[.<tag>].<suffix>``.

    The suffix is appended, never substituted: ``with_suffix`` would turn
    ``…/vue.js`` and ``…/vue.ts`` into the same ``…/vue.md``. ``tag`` is the
    language of a report that is not in the archive's main language
    (``2026-08-20.en.md``), so two languages of one day never overwrite each
    other.
    """
    parts = [p for p in fill_template(template, name, day).split("/") if p not in ("", ".", "..")]
    if not parts:
        parts = [day.isoformat()]
    middle = lang_suffix(tag, main="") if tag else ""
    parts[-1] = f"{parts[-1]}{middle}.{suffix}"
    return out_dir.joinpath(*parts)
