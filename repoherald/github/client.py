"""A GitHub REST client that is a good API citizen, over an injected ``httpx.Client``.

* **Conditional requests.** Every answer with an ETag is kept (body and
  ``Link`` header) in an :class:`~repoherald.store.base.EtagCache`; the next
  request for the same URL sends ``If-None-Match`` and a ``304`` (free: GitHub
  does not count it) is answered from the cache. Objects addressed by their
  SHA never change, so those are read from the cache without asking.
* **Rate limits.** ``X-RateLimit-Remaining``/``Reset`` are read on every
  answer. When the primary limit is used up, the client waits if the reset is
  within ``max_wait_seconds``; otherwise it stops with one line saying when to
  resume (what was fetched stays cached, so the re-run continues cheaply).
  Secondary limits (403/429 with ``Retry-After`` or the "secondary rate limit"
  message) pause every worker, then retry, as GitHub's documentation asks.
  The rules live in :mod:`repoherald.github.ratelimit`.
* **Bounded concurrency.** At most ``concurrency`` requests are in flight.
* **Bounded time and memory.** Every request follows
  :mod:`repoherald.httppolicy` (``limits``): a deadline for the whole
  exchange, a cap on the decompressed body, our own redirect limit (none
  for writes), a capped 5xx ``Retry-After``; a breach is one line. Inside
  :meth:`GitHubClient.stage`, every request and wait also fits in the
  stage's time budget (:mod:`repoherald.github.budget`).
* **Clear failures.** 401, 403, 404, 409, 422, a body that is not JSON or was
  cut off, and a ``Link`` header that loops or leaves the API host each give
  one line naming the repository and what to do.

The token goes into the ``Authorization`` header and nowhere else; cache keys
are URLs, which never carry it.
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from repoherald.config.defaults import DEFAULT_GITHUB_CONCURRENCY
from repoherald.github.budget import StageBudget
from repoherald.github.errors import AmbiguousWriteError, GitHubError, github_message
from repoherald.github.ratelimit import MAX_RATE_LIMIT_WAITS, RateLimits
from repoherald.httppolicy import (
    GITHUB,
    DeadlineExceeded,
    HttpPolicyError,
    JsonTooDeep,
    Limits,
    loads,
    retry_after,
    send,
)
from repoherald.store.base import EtagCache

log = logging.getLogger("repoherald.github")

RETRY_STATUSES = frozenset({500, 502, 503, 504})
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport errors raised before a request left: retrying those cannot write twice."""
_NEXT = re.compile(r'<([^>]*)>\s*;\s*rel="?next"?')


@dataclass
class Stats:
    """What the client sent: for the benchmark and for tests that count requests."""

    requests: int = 0
    """HTTP requests sent (each retry counts)."""
    not_modified: int = 0
    from_cache: int = 0
    """Answers read from the cache without a request (immutable objects)."""
    statuses: Counter[int] = field(default_factory=Counter)


def next_link(header: str) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header, if any."""
    for part in header.split(","):
        m = _NEXT.search(part)
        if m:
            return m.group(1)
    return None


class GitHubClient:
    """Requests for one repository (``repo`` names it in every error message)."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        repo: str,
        token_env: str,
        anonymous: bool,
        cache: EtagCache | None = None,
        concurrency: int = DEFAULT_GITHUB_CONCURRENCY,
        max_wait_seconds: float = 300.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        secondary_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        limits: Limits = GITHUB,
    ) -> None:
        self._http = http
        self.limits = limits
        self.repo = repo
        self._token_env = token_env
        self.anonymous = anonymous
        self._cache = cache
        self._slots = threading.BoundedSemaphore(concurrency)
        self.concurrency = concurrency
        self._max_retries = max_retries
        self._backoff = backoff
        self._sleep = sleep
        self._lock = threading.Lock()
        self._stage: StageBudget | None = None
        self._limits = RateLimits(
            repo=repo,
            token_env=token_env,
            anonymous=anonymous,
            max_wait_seconds=max_wait_seconds,
            secondary_wait=secondary_wait,
            sleep=self._nap,
            clock=clock,
        )
        self.stats = Stats()

    @property
    def rate_remaining(self) -> int | None:
        """Requests left of the primary limit, as the last answer said (None: not said)."""
        return self._limits.remaining

    @property
    def rate_reset(self) -> int | None:
        """When the primary limit resets (Unix time), as the last answer said."""
        return self._limits.reset

    @contextmanager
    def stage(self, what: str, seconds: float) -> Iterator[None]:
        """Hold every request and wait of every thread inside the block to ``seconds`` in all;
        past them, :class:`~repoherald.errors.StageTimeoutError` names ``what``."""
        before = self._stage
        self._stage = StageBudget(what, seconds)
        try:
            yield
        finally:
            self._stage = before

    def _nap(self, seconds: float) -> None:
        """Sleep, unless the wait would outlast the stage: then end the stage at once."""
        stage = self._stage
        if stage is not None and seconds >= stage.left():
            raise stage.exceeded(f"a wait of {seconds:.0f} s would not fit in what is left")
        self._sleep(seconds)

    def _request_limits(self, doing: str) -> Limits:
        """The policy for the next request: no longer than what is left of the stage."""
        stage = self._stage
        if stage is None:
            return self.limits
        stage.check(doing)
        return self.limits.with_deadline(min(self.limits.deadline, stage.left()))

    def close(self) -> None:
        self._http.close()  # the cache is the store's (or memory): whoever made it keeps it

    # -- public calls --------------------------------------------------------

    def get(
        self,
        path: str,
        params: dict[str, str] | None = None,
        *,
        immutable: bool = False,
        cache: bool = True,
        keep_max_bytes: int | None = None,
    ) -> Any:
        """The JSON of one GET (``path`` relative to the API root, or an absolute API URL).

        ``immutable``: the URL names an object by SHA, so a cached answer is used
        without asking. ``cache=False``: neither read nor store (large blobs).
        ``keep_max_bytes``: a larger answer is not stored (a big repository's whole tree).
        """
        return self.get_page(
            path, params, immutable=immutable, cache=cache, keep_max_bytes=keep_max_bytes
        )[0]

    def get_page(
        self,
        path: str,
        params: dict[str, str] | None = None,
        *,
        immutable: bool = False,
        cache: bool = True,
        keep_max_bytes: int | None = None,
    ) -> tuple[Any, str | None]:
        """The JSON of one GET and its ``rel="next"`` URL (checked to stay on the API host)."""
        url = self._url(path, params)
        store = self._cache if cache else None
        cached = store.get(url) if store is not None else None
        if cached is not None and immutable:
            with self._lock:
                self.stats.from_cache += 1
            return self._decode(cached.body, url), self._checked_next(cached.link, url)
        response = self._request(url, cached.etag if cached is not None else None)
        if response.status_code == 304 and cached is not None:
            assert store is not None
            store.touch(url)
            return self._decode(cached.body, url), self._checked_next(cached.link, url)
        if response.status_code != 200:
            raise self.error_for(response, url)
        content_type = response.headers.get("content-type", "")
        if "json" not in content_type.lower():
            raise GitHubError(
                f"{self.repo}: GitHub's answer to {_path(url)} is not JSON ({content_type or 'no'}"
                " content type): check that [github] api_url is the API root"
                " (https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise)",
                response.status_code,
            )
        data = self._decode(response.content, url)
        link = response.headers.get("link", "")
        etag = response.headers.get("etag")
        small = keep_max_bytes is None or len(response.content) <= keep_max_bytes
        if etag and store is not None and small:
            store.put(url, etag, response.content, link)
        return data, self._checked_next(link, url)

    def send(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, creates: bool = False
    ) -> Any:
        """One write (``POST``, ``PATCH``, ``DELETE``) with a JSON body; its JSON answer or None.

        Writes are never cached and never conditional. They are retried like
        reads on 5xx, dropped connections and rate limits (GitHub asks for
        exactly that) — except a write that ``creates`` something (an issue, a
        comment): retried after a 5xx or a connection lost once the request was
        out, it could create it twice, so it raises :class:`AmbiguousWriteError`
        for the caller to look first. Rate limits and connections never made
        are retried for every write.
        A 4xx raises :class:`GitHubError` carrying the status and GitHub's message.
        """
        url = self._url(path, None)
        response = self._request(url, None, method=method, body=body, creates=creates)
        if not 200 <= response.status_code < 300:
            raise self.error_for(response, url)
        if response.status_code == 204 or not response.content:
            return None
        return self._decode(response.content, url)

    def query(self, path: str, body: dict[str, Any]) -> Any:
        """A read sent as a ``POST`` (a GraphQL query); its JSON answer.

        Retried like a read on 5xx and dropped connections, never cached. A
        rate limit is not waited for: it raises :class:`GitHubError` at once,
        for the caller has the REST API to fall back on (GraphQL's budget is
        not REST's, and a pause would hold every REST request of the client).
        """
        url = self._url(path, None)
        response = self._request(url, None, method="POST", body=body, patient=False)
        if response.status_code != 200:
            raise self.error_for(response, url)
        return self._decode(response.content, url)

    def pages(
        self, path: str, params: dict[str, str] | None = None, *, max_pages: int = 1000
    ) -> Iterator[Any]:
        """Each page of a listing, following ``Link: rel="next"``; a loop is an error."""
        seen: set[str] = set()
        url: str | None = self._url(path, params)
        while url is not None:
            if url in seen:
                raise GitHubError(
                    f"{self.repo}: GitHub's Link header for {_path(url)} leads back to a page"
                    " already read, so the listing cannot be trusted: retry later"
                )
            if len(seen) >= max_pages:
                raise GitHubError(
                    f"{self.repo}: GitHub's listing {_path(url)} has more than {max_pages}"
                    " pages: ask for fewer days at a time"
                )
            seen.add(url)
            data, url = self.get_page(url)
            yield data

    # -- one request, with retries and rate limits -----------------------------

    def _url(self, path: str, params: dict[str, str] | None) -> str:
        if path.startswith(("http://", "https://")):
            url = httpx.URL(path)
        else:
            url = httpx.URL(str(self._http.base_url).rstrip("/") + "/" + path.lstrip("/"))
        if params:
            url = url.copy_merge_params(params)
        return str(url)

    def _request(
        self,
        url: str,
        etag: str | None,
        *,
        method: str = "GET",
        body: dict[str, Any] | None = None,
        creates: bool = False,
        patient: bool = True,
    ) -> httpx.Response:
        failures = 0
        waits = 0
        headers = {"If-None-Match": etag} if etag else {}
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        if content is not None:
            headers["Content-Type"] = "application/json; charset=utf-8"
        while True:
            self._limits.wait_for_pause()
            doing = f"{method} {_path(url)}"
            try:
                with self._slots:
                    limits = self._request_limits(doing)
                    with self._lock:
                        self.stats.requests += 1
                    request = self._http.build_request(
                        method, url, headers=headers, content=content
                    )
                    response = send(self._http, request, limits)
            except DeadlineExceeded as exc:
                stage = self._stage
                if stage is not None and limits.deadline < self.limits.deadline:
                    raise stage.exceeded(f"{doing} was still being answered") from None
                raise self._refused(exc, method, url, creates) from None
            except HttpPolicyError as exc:
                raise self._refused(exc, method, url, creates) from None
            except httpx.TransportError as exc:
                if creates and not isinstance(exc, NOT_SENT):
                    raise AmbiguousWriteError(
                        f"{self.repo}: the connection to GitHub broke ({type(exc).__name__})"
                        f" after {method} {_path(url)} was sent"
                    ) from None
                failures += 1
                if failures > self._max_retries:
                    raise self._transport_error(exc, url, failures) from None
                self._nap(self._backoff_delay(failures))
                continue
            status = response.status_code
            if not patient:
                with self._lock:
                    self.stats.statuses[status] += 1
                if status in (403, 429):
                    return response  # another budget than REST's: neither noted nor waited for
            else:
                self._note(response)
            if status in (403, 429):
                wait = self._limits.wait_after(response)
                if wait is not None:
                    waits += 1
                    if waits > MAX_RATE_LIMIT_WAITS:
                        raise GitHubError(
                            f"{self.repo}: GitHub kept rate-limiting {_path(url)} after"
                            f" {waits - 1} waits: re-run later (what was fetched is cached)",
                            status,
                        )
                    self._limits.pause(wait)
                    continue
            if status in RETRY_STATUSES and creates:
                raise AmbiguousWriteError(
                    f"{self.repo}: GitHub answered HTTP {status} to {method} {_path(url)}",
                    status,
                )
            if status in RETRY_STATUSES:
                failures += 1
                if failures > self._max_retries:
                    raise GitHubError(
                        f"{self.repo}: GitHub answered HTTP {status} for {_path(url)}"
                        f" {failures} times: GitHub may be having trouble, retry later",
                        status,
                    )
                asked = retry_after(response.headers.get("retry-after"), self.limits.max_wait)
                if asked is not None and asked.capped:
                    log.warning("%s: %s", self.repo, asked.note(f"GitHub (HTTP {status})"))
                self._nap(asked.seconds if asked is not None else self._backoff_delay(failures))
                continue
            return response

    def _refused(self, exc: HttpPolicyError, method: str, url: str, creates: bool) -> GitHubError:
        """An answer that broke the HTTP policy (too slow, too large, redirects)."""
        if creates:
            return AmbiguousWriteError(
                f"{self.repo}: GitHub's answer to {method} {_path(url)} was refused"
                f" ({exc}) after the request was sent"
            )
        return GitHubError(
            f"{self.repo}: GitHub's answer to {method} {_path(url)} was refused: {exc}:"
            " retry later; if it persists, check [github] api_url"
        )

    def _backoff_delay(self, failures: int) -> float:
        return float(min(30.0, self._backoff * 2 ** (failures - 1)) * random.uniform(0.5, 1.5))

    def _note(self, response: httpx.Response) -> None:
        with self._lock:
            self.stats.statuses[response.status_code] += 1
            if response.status_code == 304:
                self.stats.not_modified += 1
        self._limits.note(response.headers)

    # -- errors ----------------------------------------------------------------

    def error_for(self, response: httpx.Response, url: str) -> GitHubError:
        """One line for a failed answer, naming the repository and what to do."""
        status, msg, where = response.status_code, github_message(response), _path(url)
        token = f"${self._token_env}"
        if status == 401:
            text = (
                f"GitHub rejected the token in {token} (HTTP 401: {msg}): renew it, or unset"
                f" {token} for anonymous access"
            )
        elif status == 403:
            text = (
                f"GitHub refused access to {where} (HTTP 403: {msg}): use a token in {token}"
                " that can read this repository"
            )
        elif status == 404:
            who = (
                f"set {token} to a token that can see it"
                if self.anonymous
                else (f"make sure the token in {token} can see it")
            )
            text = f"not found on GitHub (HTTP 404 for {where}): check owner/name, or {who}"
        elif status == 409:
            text = "the repository is empty (HTTP 409): nothing to report until it has commits"
        elif status == 422:
            text = f"GitHub could not process {where} (HTTP 422: {msg}): check the branch name"
        else:
            text = f"GitHub answered HTTP {status} for {where}: {msg}"
        return GitHubError(f"{self.repo}: {text}", status, msg)

    def _transport_error(self, exc: httpx.TransportError, url: str, tries: int) -> GitHubError:
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return GitHubError(
                f"{self.repo}: GitHub's answer to {_path(url)} was cut off mid-body {tries} times"
                f" ({type(exc).__name__}): retry later"
            )
        return GitHubError(
            f"{self.repo}: cannot reach {self._http.base_url} ({type(exc).__name__}) after"
            f" {tries} attempts: check the network and [github] api_url"
        )

    def _decode(self, body: bytes, url: str) -> Any:
        try:
            return loads(body)
        except JsonTooDeep:
            raise GitHubError(
                f"{self.repo}: GitHub's answer to {_path(url)} is JSON nested too deeply to read:"
                " retry later; if it persists, check [github] api_url"
            ) from None
        except ValueError:
            raise GitHubError(
                f"{self.repo}: GitHub's answer to {_path(url)} is not valid JSON (cut off or"
                " garbled): retry later; if it persists, check [github] api_url"
            ) from None

    def _checked_next(self, link: str, url: str) -> str | None:
        nxt = next_link(link) if link else None
        if nxt is None:
            return None
        base, target = self._http.base_url, httpx.URL(nxt)
        if (target.scheme, target.host, target.port) != (base.scheme, base.host, base.port):
            raise GitHubError(
                f"{self.repo}: GitHub's Link header for {_path(url)} points to {target.host},"
                " outside [github] api_url: refusing to send the token there"
            )
        return nxt


def _path(url: str) -> str:
    return httpx.URL(url).path
