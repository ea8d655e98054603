"""A webhook receiver on 127.0.0.1 that checks what each chat platform would check.

The path's first part is the platform (``/feishu/<token>``, ``/dingtalk``,
``/wecom``, ``/slack``, ``/json``). The server verifies the signature with
the secret it was given, the payload's shape and the platform's size limits,
and answers as the platform would; ``fail(kind, ...)`` queues error answers
(a 500, a 200 with an error code, an HTML page) to be served first, and
``hostile(kind, mode)`` queues what a hostile receiver does: ``drip`` (one
byte every ``interval`` seconds), ``bomb`` (gzip expanding to ``size``
bytes), ``huge`` (``size`` bytes), ``echo`` (a 400 quoting the request's
path and query, as some proxies do), ``redirect`` (a 307 to ``/json``) and
``escape`` (a 400 whose text carries terminal escape sequences).

``delay`` seconds pass between taking a message and answering (a slow
receiver). :meth:`WebhookServer.hold` stops a message (the next, or the one
after ``skip`` more) ``before`` it is read (never received) or ``after`` it
was received (never answered),
sets ``held`` and waits there until the server stops, so a test can kill
the sender at that step.

DingTalk's rate limit is enforced too: a 21st message to one robot within 60
seconds of ``clock`` is refused with errcode 130101 ("send too fast"). Tests
that pace by a fake clock set ``clock`` to it; signatures are always checked
against the real time.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.github_server import gzip_bomb

FEISHU_MAX_BODY = 20_000
"""Feishu documents "20 KB"; checked as 20,000 bytes, the stricter reading."""
TOO_FAST = {"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"}
FEISHU_ELEMENTS = {"div", "hr", "note", "markdown", "action", "img", "column_set"}
SLACK_BLOCKS = {"header", "section", "context", "divider", "actions", "image", "rich_text"}


def _feishu_card_problems(data: Any) -> list[str]:
    """The documented shape of a custom robot's interactive card (message card v1)."""
    problems: list[str] = []
    card = data.get("card")
    if data.get("msg_type") != "interactive" or not isinstance(card, dict):
        return ["not an interactive card"]
    title = card.get("header", {}).get("title", {})
    if title.get("tag") != "plain_text" or not isinstance(title.get("content"), str):
        problems.append("card header title is not plain_text")
    elements = card.get("elements")
    if not isinstance(elements, list) or not elements:
        return [*problems, "card without elements"]
    for e in elements:
        if e.get("tag") not in FEISHU_ELEMENTS:
            problems.append(f"unknown card element {e.get('tag')!r}")
        if e.get("tag") == "div":
            text = e.get("text", {})
            if text.get("tag") not in ("plain_text", "lark_md"):
                problems.append("div text is neither plain_text nor lark_md")
            if not isinstance(text.get("content"), str) or not text["content"]:
                problems.append("div without text")
    return problems


def _slack_problems(data: Any) -> list[str]:
    """Block Kit's limits: 50 blocks, a header's plain_text <= 150 characters, a
    section's text <= 3,000, a context's elements <= 10 (each text <= 3,000)."""
    problems: list[str] = []
    blocks = data.get("blocks", [])
    if not isinstance(blocks, list) or not blocks or len(blocks) > 50:
        return [f"{len(blocks) if isinstance(blocks, list) else 'no'} blocks (1 to 50)"]
    for b in blocks:
        kind = b.get("type")
        if kind not in SLACK_BLOCKS:
            problems.append(f"unknown block {kind!r}")
        elif kind == "header":
            text = b.get("text", {})
            if text.get("type") != "plain_text" or not 0 < len(text.get("text", "")) <= 150:
                problems.append("header is not plain_text of 1 to 150 characters")
        elif kind == "section":
            text = b.get("text", {})
            if text.get("type") not in ("mrkdwn", "plain_text"):
                problems.append("section text type")
            if not 0 < len(text.get("text", "")) <= 3000:
                problems.append("section text not 1 to 3000 characters")
        elif kind == "context":
            elements = b.get("elements", [])
            if not 0 < len(elements) <= 10:
                problems.append("context elements not 1 to 10")
            for e in elements:
                if e.get("type") not in ("mrkdwn", "plain_text", "image"):
                    problems.append("context element type")
                elif e.get("type") != "image" and not 0 < len(e.get("text", "")) <= 3000:
                    problems.append("context text not 1 to 3000 characters")
    return problems


@dataclass
class Received:
    kind: str
    path: str
    body: bytes
    headers: dict[str, str]
    problems: list[str]
    at: float = 0.0
    """When it arrived, by the server's ``clock``."""

    @property
    def data(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookServer:
    secret: str
    received: list[Received] = field(default_factory=list)
    queued: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    hostiles: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    url: str = ""
    clock: Callable[[], float] = time.time
    retry_after: str = "0"
    """The ``Retry-After`` of every 429 (``inf``, ``3600``: a hostile receiver's)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    delay: float = 0.0
    holds: list[list[Any]] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def hold(self, when: str, skip: int = 0) -> None:
        """Stop a message ``before`` reading it or ``after`` receiving it: the next one,
        or the one after ``skip`` more."""
        assert when in ("before", "after")
        self.holds.append([when, skip])

    def take_hold(self) -> str | None:
        """How the message now arriving is to be stopped, if it is."""
        with self.lock:
            if not self.holds:
                return None
            if self.holds[0][1] > 0:
                self.holds[0][1] -= 1
                return None
            return str(self.holds.pop(0)[0])

    def stop_here(self) -> None:
        self.held.set()
        self.release.wait()

    def fail(
        self, kind: str, status: int, body: str, content_type: str = "application/json"
    ) -> None:
        """Answer the next request for ``kind`` with this instead of success."""
        self.queued.setdefault(kind, []).append((status, body, content_type))

    def hostile(self, kind: str, mode: str, value: float = 0.0) -> None:
        """Answer the next request for ``kind`` as a hostile receiver would (module docstring)."""
        self.hostiles.setdefault(kind, []).append((mode, value))

    def too_fast(self, path: str, now: float) -> bool:
        """True when the robot at ``path`` already took 20 messages in the last 60 s."""
        recent = [
            r
            for r in self.received
            if r.kind == "dingtalk"
            and not r.problems
            and urllib.parse.urlsplit(r.path).path == path
            and now - r.at < 60
        ]
        return len(recent) >= 20

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
            if len(body) > FEISHU_MAX_BODY:
                problems.append(f"body {len(body)} bytes > 20 KB")
            problems += _feishu_card_problems(data)
            ts = int(data.get("timestamp", 0))
            key = f"{ts}\n{self.secret}".encode()
            want = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
            if data.get("sign") != want or abs(now - ts) > 3600:
                problems.append("bad feishu signature")
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
            if not data["markdown"].get("title"):
                problems.append("dingtalk markdown without a title")
        elif kind == "wecom":
            content = data.get("markdown", {}).get("content", "")
            if data.get("msgtype") != "markdown" or not content:
                problems.append("not markdown")
            if len(content.encode("utf-8")) > 4096:
                problems.append(f"wecom content {len(content.encode())} bytes > 4096")
        elif kind == "slack":
            problems += _slack_problems(data)
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
            hold = server.take_hold()
            if hold == "before":
                server.stop_here()
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            hostile = server.hostiles.get(kind)
            if hostile:
                mode, value = hostile.pop(0)
                server.received.append(Received(kind, self.path, body, headers, [mode]))
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self._hostile(mode, value)
                return
            queue = server.queued.get(kind)
            if queue:
                status, text, ctype = queue.pop(0)
                server.received.append(
                    Received(kind, self.path, body, headers, ["refused on demand"])
                )
                self._answer(status, text, ctype)
                return
            with server.lock:
                now = server.clock()
                problems = server.check(kind, query, headers, body)
                if kind == "dingtalk" and not problems and server.too_fast(parsed.path, now):
                    self._answer(200, json.dumps(TOO_FAST), "application/json")
                    got = Received(kind, self.path, body, headers, ["send too fast"], now)
                    server.received.append(got)
                    return
                server.received.append(Received(kind, self.path, body, headers, problems, now))
            if hold == "after":
                server.stop_here()
                return
            time.sleep(server.delay)
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

        def _hostile(self, mode: str, value: float) -> None:
            if mode == "drip":
                data = json.dumps({"errcode": 0, "errmsg": "ok"}).encode() * 100
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(value)
            elif mode in ("bomb", "huge"):
                size = int(value)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode == "bomb":
                    data = gzip_bomb(size)
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_header("Content-Length", str(size))
                self.end_headers()
                block = b" " * 65536
                for _ in range(0, size, len(block)):
                    self.wfile.write(block)
            elif mode == "redirect":
                self.send_response(307)
                self.send_header("Location", "/json")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif mode == "echo":
                self._answer(400, f"invalid_token: no hook at {self.path}", "text/plain")
            else:  # escape
                text = "refused \x1b]0;pwned\x07\x1b[2J\x9b31m by policy"
                self._answer(400, json.dumps({"errcode": 1, "errmsg": text}), "application/json")

        def _answer(self, status: int, text: str, ctype: str) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", server.retry_after)
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
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
