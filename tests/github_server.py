"""A real GitHub REST API server on 127.0.0.1 that serves real git repositories.

:class:`FakeGitHub` runs a stdlib ``ThreadingHTTPServer`` (HTTP/1.1,
keep-alive, correct ``Content-Length``) in a daemon thread and answers, for
each repository added with :meth:`FakeGitHub.add_repo`, the endpoints a
client reads, in GitHub's JSON shapes (see :mod:`tests.github_shapes`)::

    GET /repos/{o}/{n}                          repository (default_branch, html_url)
    GET /repos/{o}/{n}/branches/{branch}        branch -> head commit (404 when absent)
    GET /repos/{o}/{n}/commits?sha&since&until&per_page&page
                                                reachable commits, Link pagination;
                                                409 when empty, 422 for an unknown sha
    GET /repos/{o}/{n}/commits/{sha}?page       one commit, files 300 a page, 3,000 at most
    GET /repos/{o}/{n}/commits/{sha}/pulls      pull requests added with add_pull
    GET /repos/{o}/{n}/pulls/{number}           one pull request, with merged_by
    GET /repos/{o}/{n}/git/commits|trees|blobs/{sha}
    GET /repos/{o}/{n}/git/trees/{sha}?recursive=1
                                                every entry below, cut at ``tree_limit``
                                                entries with ``"truncated": true``
    POST /graphql (``/api/graphql`` beside ``/api/v3``)
                                                ``repository(owner, name)`` with aliased
                                                ``object(oid:)`` commits and their
                                                ``associatedPullRequests`` (from add_pull);
                                                401 without a token, as on GitHub

and, for repositories added with ``fake.issues.add_repo``, the issue and
comment endpoints of :mod:`tests.github_issues` (``POST``, ``PATCH``,
``DELETE`` too), plus ``GET /user``.

Like GitHub: every 200 has an ``ETag`` and ``If-None-Match`` gets ``304``;
every answer has ``X-RateLimit-*`` headers, and only non-304 answers use up
``rate_limit`` (then 403 with ``remaining: 0`` until ``rate_reset``). With
``token`` set, a request with another token gets 401; a ``private`` repository
is 404 without the token.

:meth:`fault` scripts trouble for requests whose path (with query) matches a
regular expression, ``times`` times: ``secondary`` (403 + ``Retry-After``),
``secondary429``, ``secondary_message`` (403, the message only), ``exhaust``
(403, primary limit used up until ``reset_in`` seconds), ``status`` (any code
with a GitHub error body), ``html`` (200 text/html), ``garbage`` (200 invalid
JSON), ``truncate`` (a ``Content-Length`` larger than what is sent, then the
connection closes), ``loop`` (a ``Link: rel="next"`` to the same page) and
``edit`` (the normal answer's JSON passed through ``edit``, a function that
returns what is sent instead: a hostile field, a wrong type; bytes are sent as
they are).
Hostile ones, for the HTTP policy: ``drip`` (headers, then the body one byte
every ``interval`` seconds), ``drip_headers`` (the status line and headers
that slowly), ``huge`` (a 200 of ``size`` bytes, written until the client
hangs up), ``bomb`` (``Content-Encoding: gzip`` that expands to ``size``
zero bytes), ``bad_gzip``, ``deep`` (JSON nested ``size`` deep),
``redirect_loop`` (302 to itself) and ``redirect`` (307 to ``location``).
``status`` takes ``headers`` (``Retry-After: inf``, ``X-RateLimit-Reset:
soon``) and a ``message`` (one with terminal escapes) too.
And ``after`` (the request is carried out — an issue opened — then answered with
``status``, as a GitHub whose front end fails after the write).
``latency`` seconds are waited in the handler before every answer, and
:meth:`slow` adds a delay to the answers whose path matches a pattern (one
repository slow, the others not).

:meth:`hold` stops a request matching ``"METHOD /path"`` ``before`` it is
read (it is never carried out) or ``after`` it was carried out (never
answered); :attr:`held` is set when one is stopped, and the handler stays
there until :meth:`close`, so a test can kill its client at that step.

Nothing here imports repoherald or pytest.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import hashlib
import json
import re
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.github_issues import IssueReply, IssueTracker
from tests.github_shapes import GitShapes

__all__ = ["FakeGitHub", "Fault", "Recorded"]


@dataclass
class Fault:
    pattern: str
    kind: str
    times: int = 1
    status: int = 500
    retry_after: int = 1
    reset_in: int = 3600
    edit: Callable[[Any], Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    message: str | None = None
    interval: float = 5.0
    size: int = 1 << 30
    location: str = "/"


@dataclass(frozen=True)
class Recorded:
    path: str
    status: int
    if_none_match: str | None
    authorization: str | None
    method: str = "GET"
    body: Any = None
    """The JSON a write sent."""


@dataclass
class _Repo:
    shapes: GitShapes
    default_branch: str
    private: bool
    full_name: str
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    by_sha: dict[str, list[int]] = field(default_factory=dict)


_MESSAGES = {
    401: "Bad credentials",
    403: "Resource not accessible by integration",
    404: "Not Found",
    409: "Git Repository is empty.",
    422: "No commit found for SHA: x",
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256
    allow_reuse_address = True
    fake: FakeGitHub


class _Reply(Exception):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers or {}


@functools.lru_cache(maxsize=4)
def gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes, gzipped (1 GiB is about 1 MB)."""
    out = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block, parts, left = bytes(1 << 20), [], size
    while left > 0:
        parts.append(out.compress(block[: min(left, len(block))]))
        left -= len(block)
    parts.append(out.flush())
    return b"".join(parts)


def _gh_error(status: int, message: str) -> _Reply:
    doc = "https://docs.github.com/rest"
    return _Reply(status, {"message": message, "documentation_url": doc, "status": str(status)})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeGitHub/1.0"
    sys_version = ""
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._enter()
        try:
            delay = fake.latency + fake.delay_for(self.path)
            if delay:
                time.sleep(delay)
            fake._handle(self)
        finally:
            fake._leave()

    do_POST = do_PATCH = do_DELETE = do_GET

    def send(self, status: int, body: bytes, headers: dict[str, str], *, cut: bool = False) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if cut:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)
        self.wfile.flush()


_RAW_KINDS = frozenset(
    {"drip", "drip_headers", "huge", "bomb", "bad_gzip", "deep", "redirect_loop", "redirect"}
)


def _write_hostile(h: _Handler, f: Fault) -> None:
    """Answer as a hostile server would, writing straight to the socket."""
    h.close_connection = f.kind not in ("redirect_loop", "redirect")
    json_type = "Content-Type: application/json\r\n"
    if f.kind == "drip_headers":
        head = f"HTTP/1.1 200 OK\r\n{json_type}X-Padding: {'x' * 200}\r\n"
        for byte in head.encode():
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(f.interval)
        return
    if f.kind in ("redirect_loop", "redirect"):
        where = h.path if f.kind == "redirect_loop" else f.location
        status = "302 Found" if f.kind == "redirect_loop" else "307 Temporary Redirect"
        h.wfile.write(
            f"HTTP/1.1 {status}\r\nLocation: {where}\r\nContent-Length: 0\r\n\r\n".encode()
        )
        return
    if f.kind == "drip":
        h.wfile.write(f"HTTP/1.1 200 OK\r\n{json_type}Content-Length: 1000\r\n\r\n".encode())
        for _ in range(1000):
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(f.interval)
        return
    if f.kind == "huge":
        h.wfile.write(f"HTTP/1.1 200 OK\r\n{json_type}Content-Length: {f.size}\r\n\r\n".encode())
        block, left = b" " * 65536, f.size
        while left > 0:
            h.wfile.write(block[: min(left, len(block))])
            left -= len(block)
        return
    if f.kind == "bomb":
        body = gzip_bomb(f.size)
    elif f.kind == "bad_gzip":
        body = gzip.compress(b'{"sha": "abc"}')[:10] + b"this is not deflate data at all" * 10
    else:  # deep
        body = b"[" * f.size + b"]" * f.size
    encoding = "" if f.kind == "deep" else "Content-Encoding: gzip\r\n"
    h.wfile.write(
        f"HTTP/1.1 200 OK\r\n{json_type}{encoding}Content-Length: {len(body)}\r\n\r\n".encode()
    )
    h.wfile.write(body)
    h.wfile.flush()


class FakeGitHub:
    """See the module docstring. ``prefix="/api/v3"`` serves the GitHub Enterprise layout."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        token: str | None = None,
        prefix: str = "",
        rate_limit: int = 5000,
        per_page_cap: int = 100,
        files_per_page: int = 300,
        files_limit: int = 3000,
        patch_limit: int = 50_000,
        tree_limit: int = 100_000,
    ) -> None:
        self.latency = latency
        self.token = token
        self.prefix = prefix.rstrip("/")
        self.rate_limit = rate_limit
        self.remaining = rate_limit
        self.rate_reset = int(time.time()) + 3600
        self.per_page_cap = per_page_cap
        self.files_per_page = files_per_page
        self.files_limit = files_limit
        self.patch_limit = patch_limit
        self.tree_limit = tree_limit
        self._repos: dict[str, _Repo] = {}
        self._faults: list[Fault] = []
        self._slow: list[tuple[str, float]] = []
        self._lock = threading.Lock()
        self._recorded: list[Recorded] = []
        self._holds: list[list[Any]] = []
        self.held = threading.Event()
        """Set when a request stopped at a :meth:`hold`."""
        self._release = threading.Event()
        self._in_flight = 0
        self.max_in_flight = 0
        self.issues = IssueTracker(
            lambda: self.api_url, lambda: f"http://127.0.0.1:{self.port}/web"
        )
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    # -- public ------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def add_repo(
        self, full_name: str, path: Path, *, default_branch: str = "main", private: bool = False
    ) -> None:
        base = f"{self.api_url}/repos/{full_name}"
        web = f"http://127.0.0.1:{self.port}/web/{full_name}"
        shapes = GitShapes(path, base, web)
        self._repos[full_name.lower()] = _Repo(shapes, default_branch, private, full_name)

    def add_pull(
        self,
        full_name: str,
        number: int,
        shas: list[str],
        *,
        title: str,
        body: str = "",
        labels: tuple[str, ...] = (),
        author: str = "octocat",
        merged_by: str | None = "maintainer",
        merge_commit_sha: str | None = None,
        base: str = "main",
    ) -> None:
        repo = self._repos[full_name.lower()]
        repo.pulls[number] = {
            "number": number,
            "state": "closed",
            "title": title,
            "body": body,
            "labels": [{"id": i, "name": n, "color": "ededed"} for i, n in enumerate(labels)],
            "user": {"login": author, "type": "User"},
            "merged_by": {"login": merged_by, "type": "User"} if merged_by else None,
            "merged_at": "2026-01-01T00:00:00Z" if merged_by else None,
            "merge_commit_sha": merge_commit_sha or (shas[-1] if shas else None),
            "html_url": f"{repo.shapes.web}/pull/{number}",
            "base": {"ref": base},
        }
        for sha in shas:
            repo.by_sha.setdefault(sha, []).append(number)

    def slow(self, pattern: str, seconds: float) -> None:
        """Wait ``seconds`` before every answer whose path (with query) matches ``pattern``."""
        with self._lock:
            self._slow.append((pattern, seconds))

    def delay_for(self, target: str) -> float:
        with self._lock:
            return sum(s for p, s in self._slow if re.search(p, target))

    def fault(self, pattern: str, kind: str, times: int = 1, **kw: Any) -> None:
        with self._lock:
            self._faults.append(Fault(pattern, kind, times, **kw))

    def hold(self, pattern: str, when: str, skip: int = 0) -> None:
        """Stop a request whose ``"METHOD /path?query"`` matches ``pattern`` (the next, or
        the one after ``skip`` more), ``before`` reading it or ``after`` carrying it out,
        until :meth:`close`."""
        assert when in ("before", "after")
        with self._lock:
            self._holds.append([pattern, when, skip])

    def _take_hold(self, target: str) -> str | None:
        with self._lock:
            for i, (pattern, when, skip) in enumerate(self._holds):
                if re.search(pattern, target):
                    if skip:
                        self._holds[i][2] -= 1
                        return None
                    del self._holds[i]
                    return str(when)
        return None

    def _stop(self, h: _Handler) -> None:
        self.held.set()
        self._release.wait()
        h.close_connection = True

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._recorded)

    def statuses(self) -> Counter[int]:
        return Counter(r.status for r in self.requests)

    def clear(self) -> None:
        with self._lock:
            self._recorded.clear()
            self.max_in_flight = self._in_flight

    def close(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeGitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- handling ------------------------------------------------------------------

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _take_fault(self, target: str, *, raw: bool = False) -> Fault | None:
        """The next fault for ``target``: a hostile raw answer (``raw``) or a scripted one."""
        with self._lock:
            for f in self._faults:
                if (f.kind in _RAW_KINDS) != raw:
                    continue
                if f.times != 0 and re.search(f.pattern, target):
                    f.times -= 1
                    return f
        return None

    def _rate_headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(max(self.remaining, 0)),
            "X-RateLimit-Reset": str(self.rate_reset),
            "X-RateLimit-Used": str(self.rate_limit - max(self.remaining, 0)),
            "X-RateLimit-Resource": "core",
        }

    def _handle(self, h: _Handler) -> None:
        auth = h.headers.get("Authorization")
        inm = h.headers.get("If-None-Match")
        method = h.command
        hold = self._take_hold(f"{method} {h.path}")
        if hold == "before":
            self._stop(h)
            return
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            sent = json.loads(raw) if raw else None
        except ValueError:
            sent = raw.decode("utf-8", "replace")
        raw_fault = self._take_fault(h.path, raw=True)
        if raw_fault is not None:
            with self._lock:
                self._recorded.append(Recorded(h.path, 200, inm, auth, method, sent))
            with contextlib.suppress(OSError):
                _write_hostile(h, raw_fault)
            return
        status, body, headers, cut = self._answer(h.path, auth, inm, method, sent)
        with self._lock:
            self._recorded.append(Recorded(h.path, status, inm, auth, method, sent))
        if hold == "after":
            self._stop(h)
            return
        h.send(status, body, headers, cut=cut)

    def _answer(
        self, target: str, auth: str | None, inm: str | None, method: str = "GET", sent: Any = None
    ) -> tuple[int, bytes, dict[str, str], bool]:
        with self._lock:
            if time.time() >= self.rate_reset:
                self.remaining, self.rate_reset = self.rate_limit, int(time.time()) + 3600
        fault = self._take_fault(target)
        try:
            if fault is not None:
                reply = self._faulty(fault, target)
                if reply is not None:
                    return reply
            if self.remaining <= 0:
                raise _gh_error(403, "API rate limit exceeded for 127.0.0.1.")
            obj, extra = self._route(target, auth, method, sent)
            if fault is not None and fault.kind == "after":
                raise _gh_error(fault.status, "Server Error")
        except IssueReply as r:  # a write's answer (201 Created...), which ``edit`` may change too
            if fault is not None and fault.kind == "after":
                return self._finish(fault.status, {"message": "Server Error"}, {}, inm)
            body = fault.edit(copy.deepcopy(r.body)) if fault and fault.edit else r.body
            return self._finish(r.status, body, {}, inm)
        except _Reply as r:
            return self._finish(r.status, r.body, r.headers, inm)
        if fault is not None and fault.edit is not None:
            obj = fault.edit(copy.deepcopy(obj))  # the shapes are cached: edit a copy
        if fault is not None and fault.kind == "loop":
            extra["Link"] = f'<http://127.0.0.1:{self.port}{target}>; rel="next"'
        return self._finish(200, obj, extra, inm)

    def _finish(
        self, status: int, obj: Any, headers: dict[str, str], inm: str | None
    ) -> tuple[int, bytes, dict[str, str], bool]:
        if isinstance(obj, bytes):  # an edited answer sent as it is (``1e400`` is no float)
            body = obj
        else:
            body = b"" if status == 204 else json.dumps(obj, ensure_ascii=False).encode("utf-8")
        etag = 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        if status == 200 and inm == etag:
            return 304, b"", {**self._rate_headers(), "ETag": etag}, False  # free, as on GitHub
        with self._lock:
            self.remaining -= 1
            rate = self._rate_headers()
        out = {**rate, "Content-Type": "application/json; charset=utf-8", **headers}
        if status == 200:
            out["ETag"] = etag
        return status, body, out, False

    def _faulty(self, f: Fault, target: str) -> tuple[int, bytes, dict[str, str], bool] | None:
        rate = {**self._rate_headers(), "Content-Type": "application/json"}
        if f.kind in ("secondary", "secondary429"):
            status = 403 if f.kind == "secondary" else 429
            msg = "You have exceeded a secondary rate limit. Please wait a few minutes."
            raise _Reply(status, {"message": msg}, {"Retry-After": str(f.retry_after)})
        if f.kind == "secondary_message":
            raise _gh_error(403, "You have exceeded a secondary rate limit and have been blocked.")
        if f.kind == "exhaust":
            reset = int(time.time()) + f.reset_in
            headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
            raise _Reply(403, {"message": "API rate limit exceeded for 127.0.0.1."}, headers)
        if f.kind == "status":
            text = f.message or _MESSAGES.get(f.status, "Server Error")
            error = _gh_error(f.status, text)
            error.headers.update(f.headers)
            raise error
        if f.kind == "html":
            page = b"<!DOCTYPE html><html><body>Sign in to GitHub</body></html>"
            return 200, page, {**rate, "Content-Type": "text/html; charset=utf-8"}, False
        if f.kind == "garbage":
            return 200, b'{"sha": "abc", "commit": ', rate, False
        if f.kind == "truncate":
            body = json.dumps({"padding": "x" * 4000}).encode()
            return 200, body, rate, True
        return None  # "loop", "edit" and "after" change a normal answer

    # -- routes ----------------------------------------------------------------------

    def _route(
        self, target: str, auth: str | None, method: str = "GET", sent: Any = None
    ) -> tuple[Any, dict[str, str]]:
        parts = urlsplit(target)
        path = parts.path
        if self.prefix and parts.path != self._graphql_path:
            if not path.startswith(self.prefix + "/"):
                raise _gh_error(404, "Not Found")
            path = path[len(self.prefix) :]
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        authed = self.token is None or auth in (f"Bearer {self.token}", f"token {self.token}")
        if auth is not None and not authed:
            raise _gh_error(401, "Bad credentials")
        if parts.path == self._graphql_path:
            if auth is None:
                raise _gh_error(401, "This endpoint requires you to be authenticated.")
            if method != "POST":
                raise _gh_error(404, "Not Found")
            return self._graphql(sent), {}
        if path == "/user":
            return self.issues.user(auth is not None), {}
        m = re.match(r"^/repos/([^/]+/[^/]+)(/.*)?$", path)
        if m and self.issues.has(m.group(1)) and (m.group(2) or "").startswith("/issues"):
            got = self.issues.route(method, m.group(1), m.group(2), query, sent, auth is not None)
            return self._paged(got, query, target) if isinstance(got, list) else (got, {})
        if method != "GET":
            raise _gh_error(404, "Not Found")
        repo = self._repos.get(m.group(1).lower()) if m else None
        if m is None or repo is None or (repo.private and (auth is None or not authed)):
            raise _gh_error(404, "Not Found")
        rest = m.group(2) or ""
        return self._repo_route(repo, rest, query, target)

    @property
    def _graphql_path(self) -> str:
        root = self.prefix[: -len("/v3")] if self.prefix.endswith("/v3") else self.prefix
        return root + "/graphql"

    def _graphql(self, sent: Any) -> dict[str, Any]:
        """The answer to the pull-request query: each ``cN: object(oid: "...")`` alias with
        the commit's pull requests, or null for a commit the repository does not have."""
        if not isinstance(sent, dict) or not isinstance(sent.get("query"), str):
            return {"errors": [{"message": "A query attribute must be specified"}]}
        text, variables = sent["query"], sent.get("variables") or {}
        repo = self._repos.get(f"{variables.get('owner')}/{variables.get('name')}".lower())
        if repo is None:
            message = "Could not resolve to a Repository with the name given."
            return {
                "data": {"repository": None},
                "errors": [{"type": "NOT_FOUND", "message": message}],
            }
        first = re.search(r"associatedPullRequests\(first: (\d+)\)", text)
        labels = re.search(r"labels\(first: (\d+)\)", text)
        n_pulls = int(first.group(1)) if first else 100
        n_labels = int(labels.group(1)) if labels else 100
        out: dict[str, Any] = {}
        for alias, sha in re.findall(r"(\w+): object\(oid: \"([0-9a-f]{40})\"\)", text):
            if repo.shapes.resolve(sha) != sha:
                out[alias] = None
                continue
            numbers = repo.by_sha.get(sha, [])[:n_pulls]
            nodes = [self._pull_node(repo.pulls[n], n_labels) for n in numbers]
            out[alias] = {"associatedPullRequests": {"nodes": nodes}}
        return {"data": {"repository": out}}

    @staticmethod
    def _pull_node(pull: dict[str, Any], n_labels: int) -> dict[str, Any]:
        merged_by = pull["merged_by"]
        merge = pull["merge_commit_sha"]
        return {
            "number": pull["number"],
            "title": pull["title"],
            "body": pull["body"],
            "url": pull["html_url"],
            "mergedAt": pull["merged_at"],
            "baseRefName": pull["base"]["ref"],
            "author": {"login": pull["user"]["login"]},
            "mergedBy": {"login": merged_by["login"]} if merged_by else None,
            "mergeCommit": {"oid": merge} if merge else None,
            "labels": {"nodes": [{"name": label["name"]} for label in pull["labels"][:n_labels]]},
        }

    def _repo_route(
        self, repo: _Repo, rest: str, q: dict[str, str], target: str
    ) -> tuple[Any, dict[str, str]]:
        g = repo.shapes
        if rest == "":
            return {
                "id": 1,
                "name": repo.full_name.split("/")[1],
                "full_name": repo.full_name,
                "private": repo.private,
                "default_branch": repo.default_branch,
                "html_url": g.web,
                "size": 0 if g.is_empty() else 1,
            }, {}
        if m := re.fullmatch(r"/branches/(.+)", rest):
            tip = g.branch_tip(m.group(1))
            if tip is None:
                raise _gh_error(404, "Branch not found")
            return {"name": m.group(1), "commit": g.commit_json(tip), "protected": False}, {}
        if rest == "/commits":
            return self._list(g, repo, q, target)
        if m := re.fullmatch(r"/commits/([0-9a-f]{40})/pulls", rest):
            numbers = repo.by_sha.get(m.group(1), [])
            pulls = [{k: v for k, v in repo.pulls[n].items() if k != "merged_by"} for n in numbers]
            return pulls, {}
        if m := re.fullmatch(r"/commits/([^/]+)", rest):
            return self._detail(g, m.group(1), q, target)
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pull = repo.pulls.get(int(m.group(1)))
            if pull is None:
                raise _gh_error(404, "Not Found")
            return pull, {}
        if m := re.fullmatch(r"/git/(commits|trees|blobs)/([0-9a-f]{40})", rest):
            kind, sha = m.groups()
            if kind == "commits":
                obj = g.git_commit_json(sha) if g.resolve(sha) == sha else None
            elif kind == "trees":
                deep = "recursive" in q  # any value recurses, as on GitHub
                obj = g.tree_json(sha, recursive=deep, limit=self.tree_limit if deep else None)
            else:
                obj = g.blob_json(sha)
            if obj is None:
                raise _gh_error(404, "Not Found")
            return obj, {}
        raise _gh_error(404, "Not Found")

    def _paged(
        self, items: list[Any], q: dict[str, str], target: str
    ) -> tuple[list[Any], dict[str, str]]:
        per_page = min(int(q.get("per_page", "30")), self.per_page_cap)
        page = int(q.get("page", "1"))
        last = max(1, -(-len(items) // per_page))
        return items[(page - 1) * per_page : page * per_page], self._link(target, page, last)

    def _link(self, target: str, page: int, last: int) -> dict[str, str]:
        parts = urlsplit(target)
        q = {k: v[-1] for k, v in parse_qs(parts.query).items()}

        def url(n: int) -> str:
            return f"http://127.0.0.1:{self.port}{parts.path}?{urlencode({**q, 'page': str(n)})}"

        links = []
        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{url(1)}>; rel="first"', f'<{url(page - 1)}>; rel="prev"']
        return {"Link": ", ".join(links)} if links else {}

    def _list(
        self, g: GitShapes, repo: _Repo, q: dict[str, str], target: str
    ) -> tuple[Any, dict[str, str]]:
        if g.is_empty():
            raise _gh_error(409, "Git Repository is empty.")
        ref = q.get("sha") or repo.default_branch
        tip = g.branch_tip(ref) or g.resolve(ref)
        if tip is None:
            raise _gh_error(422, f"No commit found for SHA: {ref}")

        def ts(key: str) -> int | None:
            return int(datetime.fromisoformat(q[key]).timestamp()) if key in q else None

        shas = g.reachable(tip, ts("since"), ts("until"))
        per_page = min(int(q.get("per_page", "30")), self.per_page_cap)
        page = int(q.get("page", "1"))
        last = max(1, -(-len(shas) // per_page))
        chosen = shas[(page - 1) * per_page : page * per_page]
        return [g.commit_json(s) for s in chosen], self._link(target, page, last)

    def _detail(
        self, g: GitShapes, ref: str, q: dict[str, str], target: str
    ) -> tuple[Any, dict[str, str]]:
        sha = g.resolve(ref)
        if sha is None:
            raise _gh_error(422, f"No commit found for SHA: {ref}")
        files = g.files(sha, self.patch_limit)[: self.files_limit]
        page = int(q.get("page", "1"))
        per = self.files_per_page
        last = max(1, -(-len(files) // per))
        body = g.commit_json(sha)
        adds = sum(f["additions"] for f in files)
        dels = sum(f["deletions"] for f in files)
        body["stats"] = {"total": adds + dels, "additions": adds, "deletions": dels}
        body["files"] = files[(page - 1) * per : page * per]
        return body, self._link(target, page, last)
