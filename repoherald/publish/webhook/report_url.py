"""The ``report_url`` template of a chat target: where the digest links the full report.

The fields mirror the archive's layout (:mod:`repoherald.publish.archive.layout`), so
a template can follow the archive's file names when the archive is served
as a website or browsed on a forge: ``…/{year}/{name}/{date}{suffix}.md``.
``{suffix}`` exists because the file names do not carry the language
uniformly: Chinese reports are untagged (``2026-08-20.md``) and English ones
are tagged (``2026-08-20.en.md``), so ``{date}.{lang}.md`` points nowhere
for a Chinese report.
"""

from __future__ import annotations

from datetime import date
from urllib.parse import quote

from repoherald.config.templates import template_fields
from repoherald.publish.archive.layout import lang_suffix

REPORT_URL_FIELDS = ("year", "month", "day", "date", "name", "lang", "suffix")
REPORT_URL_HELP = (
    "Link to the full report: {year} {month} {day} {date} {name} {lang} are filled in,"
    " and {suffix}, the archive file name's language tag: empty for zh, .en for en"
    " (e.g. https://host/reports/{year}/{name}/{date}{suffix}.md)."
    " Without it the digest names the report's file in the archive."
)


def report_url(template: str | None, *, name: str, day: date, lang: str) -> str | None:
    """The full report's address from a ``report_url`` template (:data:`REPORT_URL_FIELDS`).

    The name is percent-encoded: a report name with a space or ``#`` must not
    end the link early or change what it points to.
    """
    if not template:
        return None
    return template.format(
        year=f"{day.year:04d}",
        month=f"{day.month:02d}",
        day=f"{day.day:02d}",
        date=day.isoformat(),
        name=quote(name, safe=""),
        lang=lang,
        suffix=lang_suffix(lang),
    )


def check_report_url(template: str) -> str:
    """``template`` unchanged, or ValueError naming the field it cannot fill in.

    Checked when the config is read, so a typo is a config error and not a
    traceback at the first delivery.
    """
    template_fields(template, REPORT_URL_FIELDS, "report_url")
    return template
