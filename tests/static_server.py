"""A static file server on 127.0.0.1, as GitHub Pages (or any static host) serves a built site.

The standard library's handler in a thread: a directory request answers its
``index.html``, a missing file is a 404 the server counts in ``missing``, so a
test can say which link was broken even when the browser hides the status.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class StaticSite:
    """A running server: ``url`` ends with ``/``; ``missing`` lists the paths that were 404."""

    url: str
    missing: list[str] = field(default_factory=list)


@contextmanager
def serve(root: Path) -> Iterator[StaticSite]:
    """Serve ``root`` on a free port of 127.0.0.1 until the block ends."""
    site = StaticSite(url="")

    class Handler(SimpleHTTPRequestHandler):
        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            if code == 404:
                site.missing.append(self.path)
            super().send_error(code, message, explain)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest shows what failed, not every request."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    site.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, name="static-site", daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
