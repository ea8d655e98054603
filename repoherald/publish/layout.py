"""Where a report lives in the archive: the path template and the file names it produces.

The template is user input (``[report] path``), so it is checked when the
configuration is read — a bad one must not cost a whole analysed day at
write time — and filled by our own substitution rather than ``str.format``,
which would allow ``{name.__class__}`` and friends. Only the documented
fields exist; they take no format spec, conversion, attribute or index.
"""

from __future__ import annotations

import re
import string
from datetime import date
from pathlib import Path

from pydantic_core import PydanticCustomError

from repoherald.errors import ConfigError
from repoherald.publish.template_fields import template_fields

FIELDS = ("year", "month", "day", "date", "name")
"""The template fields: ``{year}`` 2026, ``{month}`` 08, ``{day}`` 20, ``{date}`` 2026-08-20,
``{name}`` the repository's folder name."""


def _pieces(template: str) -> list[tuple[str, str | None]]:
    """(literal text, field name or None) pairs; raises ValueError naming the first problem."""
    if not template.strip():
        raise ValueError("the path template is empty: use e.g. {year}/{name}/{date}")
    if any(ord(ch) < 0x20 for ch in template):
        raise ValueError("the path template contains a control character (NUL, newline): remove it")
    template_fields(template, FIELDS, "the path template")
    pieces: list[tuple[str, str | None]] = []
    for literal, field, _, _ in string.Formatter().parse(template):
        pieces.append((literal, field))
    return pieces


def check_template(template: str) -> str:
    """Return ``template`` if it is a valid path template, else raise ValueError saying why.

    Besides well-formed fields it must contain ``{date}`` (each day needs its
    own file) and stay inside the archive (no ``..`` segment).
    """
    pieces = _pieces(template)
    if "date" not in {field for _, field in pieces}:
        raise ValueError("the path template must contain {date}: each day needs its own file")
    if ".." in re.split(r"[/\\]", template):
        raise ValueError("the path template must stay inside the archive: remove the '..' segment")
    return template


def template_validator(value: str) -> str:
    """:func:`check_template` for a pydantic field: the message without a "Value error" prefix."""
    try:
        return check_template(value)
    except ValueError as exc:
        raise PydanticCustomError("path_template", str(exc)) from None


def safe_component(name: str) -> str:
    """A file-name-safe version of a repository or report name (never empty)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")
    return cleaned[:80] or "report"


def fill_template(template: str, name: str, day: date) -> str:
    """The template with its fields replaced; ``name`` is made file-name-safe first."""
    try:
        pieces = _pieces(template)
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


UNTAGGED_LANG = "zh"
"""The language whose reports have no language tag in the archive's file names.

``run`` writes the archive with this as its main language whatever the
report language (``config.DEFAULT_LANG``, asserted by a test; importing it
here would be circular), so ``2026-08-20.md`` is Chinese and
``2026-08-20.en.md`` English."""


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
