"""A git server on 127.0.0.1 that demands Basic auth: ``git http-backend`` behind a CGI shim.

Real git on both ends, so a test sees exactly what a private GitHub or GitLab
repository does to repoherald: a 401 first, credentials on the retry, the
smart-HTTP protocol after that. The server also records what the tests need
to check that credentials were used and never leaked: the users it let in,
how many requests it refused, and whether any process on the machine had a
secret on its command line while a request was being served.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


@dataclass
class Record:
    """What the server saw."""

    users: list[str] = field(default_factory=list)
    refused: int = 0
    requests: int = 0
    cmdline_leaks: list[str] = field(default_factory=list)


@dataclass
class GitHttpServer:
    """Serves every repository under ``root`` at ``http://127.0.0.1:<port>/<name>``."""

    root: Path
    accounts: dict[str, str]
    """user -> password accepted (change it to rotate a token)."""
    watch: tuple[bytes, ...] = ()
    """Secrets that must not appear in any process's command line."""
    record: Record = field(default_factory=Record)
    port: int = 0

    def url(self, repo: str, user: str | None = None, password: str | None = None) -> str:
        auth = f"{user}:{password}@" if user is not None else ""
        return f"http://{auth}127.0.0.1:{self.port}/{repo}"


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                handler.rfile.readline()
                return bytes(body)
            body += handler.rfile.read(size)
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


def _scan_cmdlines(secrets: tuple[bytes, ...]) -> list[str]:
    """Command lines of live processes that contain a secret (Linux /proc)."""
    hits = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if any(s in cmdline for s in secrets):
            hits.append(cmdline.replace(b"\0", b" ").decode("utf-8", "replace"))
    return hits


def _handler(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _user(self) -> str | None:
            header = self.headers.get("Authorization", "")
            if not header.startswith("Basic "):
                return None
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
            return user if server.accounts.get(user) == password else None

        def _serve(self) -> None:
            rec = server.record
            rec.requests += 1
            if server.watch:
                rec.cmdline_leaks += _scan_cmdlines(server.watch)
            body = _read_body(self)
            user = self._user()
            if user is None:
                rec.refused += 1
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            rec.users.append(user)
            self._cgi(user, body)

        def _cgi(self, user: str, body: bytes) -> None:
            parts = urlsplit(self.path)
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GIT_PROJECT_ROOT": str(server.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "GIT_CONFIG_NOSYSTEM": "1",
                "PATH_INFO": parts.path,
                "QUERY_STRING": parts.query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": user,
                "REMOTE_ADDR": "127.0.0.1",
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                "HTTP_GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            }
            proc = subprocess.run(
                ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
            )
            head, _, payload = proc.stdout.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode("latin-1").split("\r\n"):
                key, _, value = line.partition(":")
                if key.lower() == "status":
                    status = int(value.split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def serve(server: GitHttpServer) -> Iterator[GitHttpServer]:
    """Run ``server`` on a free loopback port for the duration of the block."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
