"""The one place where exceptions become exit statuses and one-line messages.

Exit status: 0 success, 1 a runtime failure (something could not be read,
analysed, written or delivered), 2 a usage error, 130 interrupted. No
traceback unless ``--debug``; every message passes through the redaction filter.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from repoherald.cli.terminal import PrintableFilter, say
from repoherald.errors import RepoheraldError, StoreDamagedError
from repoherald.redact import RedactingFilter


def fail(message: str, code: int, debug: bool) -> NoReturn:
    """Print ``repoherald: error: <message>`` (redacted, printable) and exit with ``code``."""
    if debug:
        say(traceback.format_exc())
    say(f"repoherald: error: {message}")
    sys.exit(code)


@contextmanager
def fail_on_errors(debug: bool) -> Iterator[None]:
    """Map library exceptions raised inside the block to an exit status."""
    try:
        yield
    except StoreDamagedError as exc:
        fail(f"{exc} (or pass --rebuild)", exc.exit_code, debug)
    except RepoheraldError as exc:
        fail(str(exc), exc.exit_code, debug)
    except KeyboardInterrupt:
        fail("interrupted", 130, debug)


def setup_logging(debug: bool) -> None:
    """Log to stderr, every record redacted and stripped of terminal controls.

    Other libraries say only warnings; repoherald's own loggers also say
    what they are waiting for (a GitHub rate limit, DingTalk's pacing) at
    INFO, so a pause of a minute is not mistaken for a hang.
    """
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("repoherald").setLevel(logging.DEBUG if debug else logging.INFO)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
        if not any(isinstance(f, PrintableFilter) for f in handler.filters):
            handler.addFilter(PrintableFilter())
