"""One request under the policy: deadline, bounded body, redirects followed by us or not at all.

Every client sends through :func:`send` (sync) or :func:`asend` (async), so
the rules are the same everywhere:

* the whole exchange, body included, ends by ``limits.deadline``;
* the body is read in chunks, decompressed within ``limits.max_body``;
* a GET follows at most ``limits.max_redirects`` redirects, each one read
  no further than its headers, ``Authorization`` dropped when the origin
  changes, and never to anything but http(s); any other method follows none,
  so a ``307`` answering a POST is returned as the answer it is (not a success).

The answer comes back as an ordinary, fully read :class:`httpx.Response`
(without ``Content-Encoding``: the body is already decoded).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from repoherald.httppolicy.body import ACCEPT_ENCODING, BodyReader
from repoherald.httppolicy.deadline import arm, deadline_in_force
from repoherald.httppolicy.limits import DeadlineExceeded, Limits, TooManyRedirects

REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SAFE = frozenset({"GET", "HEAD"})
_CHUNK = 64 * 1024


def new_client(policy: Limits, **kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` whose requests can be held to a deadline (see :func:`send`)."""
    kwargs.setdefault(
        "timeout",
        httpx.Timeout(policy.read_timeout, connect=min(policy.connect_timeout, policy.deadline)),
    )
    return arm(httpx.Client(**kwargs))


def new_async_client(policy: Limits, **kwargs: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` with the policy's timeouts (the deadline is :func:`asend`'s)."""
    kwargs.setdefault(
        "timeout",
        httpx.Timeout(policy.read_timeout, connect=min(policy.connect_timeout, policy.deadline)),
    )
    return httpx.AsyncClient(**kwargs)


def send(client: httpx.Client, request: httpx.Request, limits: Limits) -> httpx.Response:
    """Send ``request`` and read its answer under ``limits``.

    Raises :class:`~repoherald.httppolicy.limits.HttpPolicyError` subclasses
    for a broken policy, and httpx's transport errors as httpx raises them.
    """
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    at = time.monotonic() + limits.deadline
    hops = 0
    with deadline_in_force(at):
        while True:
            try:
                response = client.send(request, stream=True, follow_redirects=False)
                try:
                    nxt = _next_hop(request, response, limits, hops)
                    if nxt is None:
                        return _read(response, limits, at)
                finally:
                    response.close()
            except httpx.TimeoutException:
                if time.monotonic() >= at - 0.01:
                    raise _late(limits) from None
                raise
            request, hops = nxt, hops + 1


async def asend(
    client: httpx.AsyncClient, request: httpx.Request, limits: Limits
) -> httpx.Response:
    """:func:`send` for an ``httpx.AsyncClient``: the same rules, the deadline by asyncio."""
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    hops = 0
    try:
        async with asyncio.timeout(limits.deadline):
            while True:
                response = await client.send(request, stream=True, follow_redirects=False)
                try:
                    nxt = _next_hop(request, response, limits, hops)
                    if nxt is None:
                        reader = _reader(response, limits)
                        if reader is None:
                            return _read_already(response, limits)
                        async for chunk in response.aiter_raw(_CHUNK):
                            reader.feed(chunk)
                        return _decoded(response, reader.finish())
                finally:
                    await response.aclose()
                request, hops = nxt, hops + 1
    except TimeoutError:
        raise _late(limits) from None


def _late(limits: Limits) -> DeadlineExceeded:
    return DeadlineExceeded(f"the answer took longer than {limits.deadline:g} s, the deadline")


def _reader(response: httpx.Response, limits: Limits) -> BodyReader | None:
    """A reader for the raw body; None when a transport in memory already read it."""
    try:
        response.content  # noqa: B018 - raises unless the body is already in memory
    except httpx.ResponseNotRead:
        return BodyReader(response.headers.get("content-encoding"), limits)
    return None


def _read_already(response: httpx.Response, limits: Limits) -> httpx.Response:
    """An answer a transport in memory (a test's ``MockTransport``) had decoded already."""
    reader = BodyReader(None, limits)
    reader.feed(response.content)
    return _decoded(response, reader.finish())


def _read(response: httpx.Response, limits: Limits, at: float) -> httpx.Response:
    reader = _reader(response, limits)
    if reader is None:
        return _read_already(response, limits)
    for chunk in response.iter_raw(_CHUNK):
        reader.feed(chunk)
        if time.monotonic() > at:
            raise _late(limits)
    return _decoded(response, reader.finish())


def _decoded(response: httpx.Response, body: bytes) -> httpx.Response:
    headers = [
        (k, v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    extensions = {k: v for k, v in response.extensions.items() if k != "network_stream"}
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=body,
        request=response.request,
        extensions=extensions,
    )


def _next_hop(
    request: httpx.Request, response: httpx.Response, limits: Limits, hops: int
) -> httpx.Request | None:
    """The request a redirect leads to, or None when this answer is the one to read."""
    location = response.headers.get("location")
    if request.method not in _SAFE or response.status_code not in REDIRECTS or not location:
        return None
    if hops >= limits.max_redirects:
        raise TooManyRedirects(
            f"more than {limits.max_redirects} redirects (a redirect loop, most likely)"
        )
    try:
        url = request.url.join(location)
    except httpx.InvalidURL:
        return None
    if url.scheme not in ("http", "https"):
        return None
    headers = httpx.Headers(
        [(k, v) for k, v in request.headers.multi_items() if k.lower() not in ("host", "cookie")]
    )
    same_origin = (url.scheme, url.host, url.port) == (
        request.url.scheme,
        request.url.host,
        request.url.port,
    )
    if not same_origin:
        headers.pop("authorization", None)
    return httpx.Request(request.method, url, headers=headers, extensions=request.extensions)
