"""The GitHub client over ``httpx.MockTransport``: ETags, pagination, rate limits, errors.

Time is injected (``sleep`` records, ``clock`` is fixed), so waits are
asserted as numbers, never measured.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from repoherald.config import GitHubSettings
from repoherald.errors import SourceError
from repoherald.github.client import GitHubClient, next_link
from repoherald.github.connect import open_client, parse_api_url, read_token
from repoherald.github.errors import GitHubError
from repoherald.redact import _forget_all, redact
from repoherald.store.etags import MemoryEtags

API = "https://api.example.test/api/v3"
NOW = 1_800_000_000.0
Handler = Callable[[httpx.Request], httpx.Response]


def answer(status: int = 200, body: Any = None, **headers: str) -> httpx.Response:
    data = json.dumps({} if body is None else body).encode()
    hdrs = {
        "content-type": "application/json",
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    return httpx.Response(status, content=data, headers=hdrs)


def limits(remaining: str, reset: str) -> dict[str, str]:
    return {"x_ratelimit_remaining": remaining, "x_ratelimit_reset": reset}


class Rig:
    """A client over a scripted transport; sleeping only moves its clock forward."""

    def __init__(self, handler: Handler, **kw: Any) -> None:
        self.seen: list[httpx.Request] = []
        self.sleeps: list[float] = []
        self.now = NOW

        def record(request: httpx.Request) -> httpx.Response:
            self.seen.append(request)
            return handler(request)

        http = httpx.Client(base_url=API, transport=httpx.MockTransport(record))
        self.cache = MemoryEtags()
        options: dict[str, Any] = {
            "repo": "acme/widget",
            "token_env": "GITHUB_TOKEN",
            "anonymous": False,
            "cache": self.cache,
            "sleep": self.sleep,
            "clock": lambda: self.now,
            "backoff": 0.5,
        }
        options.update(kw)
        self.client = GitHubClient(http, **options)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def scripted(*responses: httpx.Response) -> Handler:
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return handler


def test_an_etag_is_sent_back_and_a_304_is_answered_from_the_cache() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"etag": '"v1"'})
        return answer(body={"n": 1}, etag='"v1"', link=f'<{API}/x?page=2>; rel="next"')

    rig = Rig(handler)
    first = rig.client.get_page("/repos/acme/widget")
    second = rig.client.get_page("/repos/acme/widget")
    assert first == second == ({"n": 1}, f"{API}/x?page=2")
    assert "if-none-match" not in rig.seen[0].headers
    assert rig.seen[1].headers["if-none-match"] == '"v1"'
    assert (rig.client.stats.requests, rig.client.stats.not_modified) == (2, 1)


def test_objects_named_by_sha_come_from_the_cache_without_a_request() -> None:
    rig = Rig(scripted(answer(body={"tree": []}, etag='"t"')))
    for _ in range(3):
        assert rig.client.get("/repos/a/b/git/trees/abc", immutable=True) == {"tree": []}
    assert len(rig.seen) == 1 and rig.client.stats.from_cache == 2


def test_uncached_reads_neither_send_nor_store_an_etag() -> None:
    rig = Rig(scripted(answer(body={"content": ""}, etag='"b"')))
    rig.client.get("/blob", cache=False)
    rig.client.get("/blob", cache=False)
    assert all("if-none-match" not in r.headers for r in rig.seen)
    assert rig.cache.get(f"{API}/blob") is None


def test_an_answer_larger_than_keep_max_bytes_is_used_but_not_stored() -> None:
    big = {"tree": [{"path": "x" * 100}]}
    rig = Rig(scripted(answer(body=big, etag='"t"')))
    for _ in range(2):
        assert rig.client.get("/t", immutable=True, keep_max_bytes=50) == big
    assert len(rig.seen) == 2 and rig.cache.get(f"{API}/t") is None
    assert rig.client.get("/t", immutable=True, keep_max_bytes=1000) == big
    assert rig.cache.get(f"{API}/t") is not None


def test_pages_follow_link_headers_and_stop_at_the_last() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page", "1"))
        link = f'<{API}/items?page={page + 1}>; rel="next"' if page < 3 else ""
        return answer(body=[page], link=link)

    rig = Rig(handler)
    assert list(rig.client.pages("/items")) == [[1], [2], [3]]


def test_a_looping_link_header_is_an_error_naming_the_repository() -> None:
    rig = Rig(scripted(answer(body=[1], link=f'<{API}/items?page=1>; rel="next"')))
    with pytest.raises(GitHubError, match=r"^acme/widget: .*leads back to a page already read"):
        list(rig.client.pages("/items", {"page": "1"}))
    assert len(rig.seen) == 1


def test_a_link_to_another_host_is_refused_so_the_token_stays_home() -> None:
    rig = Rig(scripted(answer(body=[1], link='<https://evil.test/items?page=2>; rel="next"')))
    with pytest.raises(GitHubError, match=r"points to evil\.test, outside"):
        list(rig.client.pages("/items"))


def test_a_primary_limit_that_resets_within_max_wait_is_waited_for() -> None:
    reset = str(int(NOW) + 120)
    used_up = answer(403, {"message": "API rate limit exceeded"}, **limits("0", reset))
    rig = Rig(scripted(used_up, answer(body={"ok": True})), max_wait_seconds=300)
    assert rig.client.get("/x") == {"ok": True}
    assert rig.sleeps == [121.0]


def test_a_primary_limit_far_away_stops_with_when_to_resume() -> None:
    reset = int(NOW) + 3600
    headers = {**limits("0", str(reset)), "x_ratelimit_limit": "60"}
    used_up = answer(403, {"message": "API rate limit exceeded"}, **headers)
    rig = Rig(scripted(used_up), anonymous=True)
    with pytest.raises(GitHubError) as info:
        rig.client.get("/x")
    text = str(info.value)
    when = time.strftime("%H:%M", time.gmtime(reset))
    assert text.startswith("acme/widget: the GitHub API rate limit (60 requests/hour)")
    assert f"until {when} UTC" in text and "re-run after that" in text
    assert "set GITHUB_TOKEN to a token" in text
    assert rig.sleeps == [] and len(rig.seen) == 1


@pytest.mark.parametrize(
    ("first", "expected_wait"),
    [
        (
            answer(403, {"message": "You have exceeded a secondary rate limit"}, retry_after="7"),
            7.0,
        ),
        (answer(429, {"message": "Too many requests"}, retry_after="3"), 3.0),
        (answer(403, {"message": "You have exceeded a secondary rate limit."}), 60.0),
    ],
)
def test_secondary_limits_back_off_then_retry(first: httpx.Response, expected_wait: float) -> None:
    rig = Rig(scripted(first, answer(body={"ok": 1})))
    assert rig.client.get("/x") == {"ok": 1}
    assert rig.sleeps == [expected_wait]


def test_repeated_secondary_limits_wait_longer_each_time() -> None:
    limited = answer(403, {"message": "secondary rate limit"})
    rig = Rig(scripted(limited, limited, limited, answer(body=[])), secondary_wait=10.0)
    rig.client.get("/x")
    assert rig.sleeps == [10.0, 20.0, 40.0]


def test_a_secondary_wait_beyond_max_wait_stops_instead() -> None:
    rig = Rig(scripted(answer(429, {"message": "slow down"}, retry_after="900")))
    with pytest.raises(GitHubError, match=r"asks to wait 900 s, more than .*max_wait_seconds=300"):
        rig.client.get("/x")


def test_server_errors_are_retried_with_backoff_then_reported() -> None:
    rig = Rig(scripted(answer(502), answer(503), answer(body={"ok": 1})))
    assert rig.client.get("/x") == {"ok": 1}
    assert len(rig.sleeps) == 2 and 0.25 <= rig.sleeps[0] <= 0.75 and rig.sleeps[1] <= 1.5
    down = Rig(scripted(answer(500)))
    with pytest.raises(GitHubError, match=r"HTTP 500 for /api/v3/x 5 times.*retry later"):
        down.client.get("/x")


def test_a_body_cut_off_mid_way_is_retried_then_named() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise httpx.RemoteProtocolError("peer closed connection", request=request)
        return answer(body={"ok": 1})

    assert Rig(handler).client.get("/x") == {"ok": 1}

    def always(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("incomplete chunked read", request=request)

    with pytest.raises(GitHubError, match=r"^acme/widget: .*/x was cut off mid-body 5 times"):
        Rig(always).client.get("/x")


def test_answers_that_are_not_json_are_named() -> None:
    html = httpx.Response(200, content=b"<html></html>", headers={"content-type": "text/html"})
    with pytest.raises(GitHubError, match=r"is not JSON \(text/html.*api_url is the API root"):
        Rig(scripted(html)).client.get("/x")
    cut = httpx.Response(200, content=b'{"a": [1, 2', headers={"content-type": "application/json"})
    with pytest.raises(GitHubError, match="is not valid JSON"):
        Rig(scripted(cut)).client.get("/x")


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (401, "Bad credentials", "rejected the token in $GITHUB_TOKEN (HTTP 401: Bad credentials)"),
        (403, "Resource not accessible", "refused access to /api/v3/x (HTTP 403"),
        (404, "Not Found", "not found on GitHub (HTTP 404 for /api/v3/x)"),
        (409, "Git Repository is empty.", "the repository is empty (HTTP 409)"),
        (422, "No commit found for SHA: dev", "(HTTP 422: No commit found for SHA: dev)"),
    ],
)
def test_client_errors_are_one_line_naming_the_repository(
    status: int, message: str, expected: str
) -> None:
    rig = Rig(scripted(answer(status, {"message": message})))
    with pytest.raises(GitHubError) as info:
        rig.client.get("/x")
    assert str(info.value).startswith("acme/widget: ") and expected in str(info.value)
    assert info.value.status == status and "\n" not in str(info.value)
    assert len(rig.seen) == 1


def test_at_most_concurrency_requests_are_in_flight() -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return answer(body={})

    rig = Rig(handler, concurrency=3)
    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(lambda i: rig.client.get(f"/x/{i}"), range(36)))
    assert len(rig.seen) == 36 and state["peak"] <= 3


def test_open_client_sends_the_token_only_in_the_authorization_header() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(body={}, etag='"e"')

    settings = GitHubSettings(api_url=API + "/")
    client = open_client(
        settings,
        "acme/widget",
        None,
        token="ghp_" + "x" * 36,
        transport=httpx.MockTransport(handler),
    )
    client.get("/repos/acme/widget")
    client.close()
    (req,) = seen
    assert str(req.url) == f"{API}/repos/acme/widget"
    assert req.headers["authorization"] == "Bearer ghp_" + "x" * 36
    assert req.headers["x-github-api-version"] == "2022-11-28"
    assert "ghp_" not in str(req.url)


def test_api_url_must_be_http() -> None:
    assert parse_api_url("https://ghe.example.com/api/v3/", "r") == "https://ghe.example.com/api/v3"
    for bad in ("ftp://x", "api.github.com", "https://user:pw@host", "javascript:alert(1)"):
        with pytest.raises(SourceError, match=r"^r: \[github\] api_url .* is not an http\(s\) URL"):
            parse_api_url(bad, "r")


def test_a_named_token_variable_must_be_set_and_is_registered_for_redaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RH_UNIT_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    explicit = GitHubSettings(token_env="RH_UNIT_TOKEN", token_env_explicit=True)
    with pytest.raises(SourceError, match=r"RH_UNIT_TOKEN .*is not set"):
        read_token(explicit, "acme/widget", required=True)
    assert read_token(GitHubSettings(), "acme/widget", required=True) is None
    monkeypatch.setenv("RH_UNIT_TOKEN", "s3cret-value-42")
    try:
        assert read_token(explicit, "acme/widget", required=True) == "s3cret-value-42"
        assert redact("token s3cret-value-42 leaked") == "token *** leaked"
    finally:
        _forget_all()


def test_next_link_reads_github_link_headers() -> None:
    header = (
        '<https://api.github.com/x?page=2>; rel="next", '
        '<https://api.github.com/x?page=9>; rel="last"'
    )
    assert next_link(header) == "https://api.github.com/x?page=2"
    assert next_link('<https://api.github.com/x?page=1>; rel="prev"') is None
