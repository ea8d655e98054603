"""A webhook receiver on 127.0.0.1 that checks what each chat platform would check.

The path's first part is the platform (``/feishu/<token>``, ``/dingtalk``,
``/wecom``, ``/slack``, ``/json``). The server verifies the signature with
the secret it was given, the payload's shape and the platform's size limit,
and answers as the platform would; ``fail(kind, ...)`` queues error answers
(a 500, a 200 with an error code, an HTML page) to be served first.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    kind: str
    path: str
    body: bytes
    headers: dict[str, str]
    problems: list[str]

    @property
    def data(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookServer:
    secret: str
    received: list[Received] = field(default_factory=list)
    queued: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    url: str = ""

    def fail(
        self, kind: str, status: int, body: str, content_type: str = "application/json"
    ) -> None:
        """Answer the next request for ``kind`` with this instead of success."""
        self.queued.setdefault(kind, []).append((status, body, content_type))

    def accepted(self, kind: str) -> list[Received]:
        return [r for r in self.received if r.kind == kind and not r.problems]

    def check(
        self, kind: str, query: dict[str, str], headers: dict[str, str], body: bytes
    ) -> list[str]:
        problems: list[str] = []
        try:
            data = json.loads(body)
        except ValueError:
            return ["not JSON"]
        now = time.time()
        if kind == "feishu":
            if len(body) > 20 * 1024:
                problems.append(f"body {len(body)} bytes > 20 KB")
            ts = int(data.get("timestamp", 0))
            key = f"{ts}\n{self.secret}".encode()
            want = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
            if data.get("sign") != want or abs(now - ts) > 3600:
                problems.append("bad feishu signature")
            if data.get("msg_type") != "interactive" or "elements" not in data.get("card", {}):
                problems.append("not an interactive card")
        elif kind == "dingtalk":
            ts = int(query.get("timestamp", "0"))
            mac = hmac.new(self.secret.encode(), f"{ts}\n{self.secret}".encode(), hashlib.sha256)
            if (
                query.get("sign") != base64.b64encode(mac.digest()).decode()
                or abs(now * 1000 - ts) > 3_600_000
            ):
                problems.append("bad dingtalk signature")
            if data.get("msgtype") != "markdown" or not data["markdown"].get("text"):
                problems.append("not markdown")
            if len(data["markdown"].get("text", "").encode()) > 20_000:
                problems.append("dingtalk text too long")
        elif kind == "wecom":
            content = data.get("markdown", {}).get("content", "")
            if data.get("msgtype") != "markdown" or not content:
                problems.append("not markdown")
            if len(content.encode("utf-8")) > 4096:
                problems.append(f"wecom content {len(content.encode())} bytes > 4096")
        elif kind == "slack":
            blocks = data.get("blocks", [])
            if not blocks or len(blocks) > 50:
                problems.append("blocks count")
            for b in blocks:
                if b.get("type") == "section" and len(b["text"]["text"]) > 3000:
                    problems.append("section text > 3000 characters")
        elif kind == "json":
            want = "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
            if headers.get("x-repoherald-signature") != want:
                problems.append("bad json signature")
            if "repos" not in data:
                problems.append("not the JSON twin")
        return problems


def _handler(server: WebhookServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            kind = parsed.path.strip("/").split("/")[0]
            query = dict(urllib.parse.parse_qsl(parsed.query))
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            queue = server.queued.get(kind)
            if queue:
                status, text, ctype = queue.pop(0)
                server.received.append(
                    Received(kind, self.path, body, headers, ["refused on demand"])
                )
                self._answer(status, text, ctype)
                return
            problems = server.check(kind, query, headers, body)
            server.received.append(Received(kind, self.path, body, headers, problems))
            if kind in ("feishu",):
                answer = {"code": 19021 if problems else 0, "msg": "; ".join(problems) or "success"}
            elif kind == "slack":
                self._answer(
                    400 if problems else 200, "invalid_blocks" if problems else "ok", "text/plain"
                )
                return
            else:
                answer = {
                    "errcode": 310000 if problems else 0,
                    "errmsg": "; ".join(problems) or "ok",
                }
            self._answer(200, json.dumps(answer), "application/json")

        def _answer(self, status: int, text: str, ctype: str) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def webhook_server(secret: str) -> Iterator[WebhookServer]:
    """A running receiver; ``server.url`` is its base (``http://127.0.0.1:PORT``)."""
    state = WebhookServer(secret)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
