"""What an issue's text carries besides the report: its marker, and links that ping no one.

The marker is the hidden first line of the issue body and of each comment
holding a part of the report; it is how the publisher recognises its own
issue when the ledger is lost. It is matched only at the very start of a
body, where report text never is, and names the repository and the day.

A link to a pull request or issue on github.com, posted in an issue, adds a
"mentioned this" event to that pull request's timeline: a daily report
would leave one on every upstream PR it lists. GitHub's own redirect host
(``redirect.github.com``, used by Dependabot and Renovate for this reason)
leads to the same page without the event.
"""

from __future__ import annotations

import re
from datetime import date
from urllib.parse import quote, unquote

_MARKER = re.compile(r"\A<!-- repoherald:v1 repo=(\S+) day=(\d{4}-\d{2}-\d{2})(?: part=(\d+))? -->")
_BACKLINK = re.compile(r"(?<![\w/.-])https://github\.com/([\w.-]+/[\w.-]+/(?:pull|issues)/\d+)")


def marker(name: str, day: date, part: int | None = None) -> str:
    """The hidden first line of the issue body (``part`` None) or of comment ``part``."""
    tail = f" part={part}" if part is not None else ""
    return f"<!-- repoherald:v1 repo={quote(name, safe='')} day={day.isoformat()}{tail} -->\n"


def read_marker(body: object) -> tuple[str, date, int | None] | None:
    """(name, day, part) of a body that starts with a marker; None otherwise."""
    m = _MARKER.match(body) if isinstance(body, str) else None
    if m is None:
        return None
    try:
        day = date.fromisoformat(m.group(2))
    except ValueError:
        return None
    return unquote(m.group(1)), day, int(m.group(3)) if m.group(3) else None


def no_backlinks(markdown: str) -> str:
    """``markdown`` with its links to github.com pull requests and issues sent via the
    redirect host, so posting it adds nothing to those pull requests' timelines.

    Bare URLs count too: a commit message quoting one is shown as text, and
    GitHub turns a URL in text into a link (and the event) by itself.
    """
    return _BACKLINK.sub(r"https://redirect.github.com/\1", markdown)
