"""An overall deadline for a synchronous httpx request, down to every socket read.

httpx's timeouts bound each read, not their sum: a server that sends one byte
every five seconds, in the headers or the body, never trips a 30 s read
timeout. The deadline of the request in flight is kept per thread (a sync
httpx request and the reading of its body happen in the caller's thread), and
every connect, read, write and TLS handshake of the connection is given at
most the time left, so the request fails once the deadline passes.

httpx does not let a client choose httpcore's network backend, so
:func:`arm` wraps the one its transports already hold. This touches
private attributes of httpx and httpcore; ``tests/integration/test_http_policy_github.py``
drips headers and bodies to catch a release that moves them.
"""

from __future__ import annotations

import threading
import time
import typing
from collections.abc import Iterator
from contextlib import contextmanager

import httpcore
import httpx

_local = threading.local()


@contextmanager
def deadline_in_force(at: float) -> Iterator[None]:
    """Hold reads and writes of this thread's requests to ``at`` (``time.monotonic``)."""
    before = getattr(_local, "deadline", None)
    _local.deadline = at
    try:
        yield
    finally:
        _local.deadline = before


def _clamp(timeout: float | None) -> float | None:
    at: float | None = getattr(_local, "deadline", None)
    if at is None:
        return timeout
    left = max(at - time.monotonic(), 0.001)
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _clamp(timeout)))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _clamp(timeout), local_address, socket_options)
        return _Stream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _clamp(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def arm(client: httpx.Client) -> httpx.Client:
    """Make every network transport of ``client`` honour the thread's deadline.

    Transports that are not httpx's own (a test's ``MockTransport``) are left as they are.
    """
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        armed = isinstance(backend, _Backend)
        if isinstance(transport, httpx.HTTPTransport) and backend is not None and not armed:
            pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
    return client
