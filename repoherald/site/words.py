"""The site's own words (navigation, filters, charts), from the i18n catalogues.

Report labels (field names, change types, importance) come from the report
catalogues' plain keys, so a day page says what the Markdown says; what exists
on the site alone is under the catalogues' ``site.`` keys.
"""

from __future__ import annotations

from repoherald.i18n import CATALOGUES, CONSOLE_LANGUAGE, t


def word(lang: str, key: str, **kwargs: object) -> str:
    """The site's text for ``key`` in ``lang`` (the console's language when ``lang`` has none)."""
    return t(lang if lang in CATALOGUES else CONSOLE_LANGUAGE, f"site.{key}", **kwargs)
