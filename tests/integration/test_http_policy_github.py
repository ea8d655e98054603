"""The GitHub client against a hostile server on 127.0.0.1: every answer costs bounded time
and memory and ends in one line naming the repository, never a traceback or a hang.

Limits are made small (a 2 s deadline, a 1 MiB body) so the tests are quick;
the server's drip interval is the only wait, and the deadline bounds it.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.github.client import GitHubClient
from repoherald.github.errors import GitHubError
from repoherald.httppolicy import GITHUB, new_client
from repoherald.pipeline.run import run
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub, gzip_bomb

LIMITS = replace(GITHUB, deadline=2.0, max_body=1 << 20, read_timeout=10.0)
PATH = "user"
MATCH = r"^/user$"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as gh:
        yield gh


class Sleeps(list[float]):
    """Records sleeps instead of sleeping; the client's clock moves by them."""

    now = 1_800_000_000.0

    def __call__(self, seconds: float) -> None:
        self.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def client(fake: FakeGitHub, sleeps: Sleeps | None = None, **kw: Any) -> GitHubClient:
    http = new_client(LIMITS, base_url=fake.api_url, headers={"Authorization": "Bearer t0k3n"})
    sleeps = sleeps if sleeps is not None else Sleeps()
    return GitHubClient(
        http,
        repo="acme/widget",
        token_env="GITHUB_TOKEN",
        anonymous=False,
        sleep=sleeps,
        clock=sleeps.clock,
        limits=LIMITS,
        **kw,
    )


def failure(fake: FakeGitHub, **kw: Any) -> str:
    with pytest.raises(GitHubError) as caught:
        client(fake, **kw).get(PATH)
    text = str(caught.value)
    assert text.startswith("acme/widget: ") and "\n" not in text
    return text


@pytest.mark.parametrize("kind", ["drip", "drip_headers"])
def test_a_server_that_drips_one_byte_at_a_time_fails_at_the_deadline(
    fake: FakeGitHub, kind: str
) -> None:
    fake.fault(MATCH, kind, times=-1, interval=0.5)
    assert "took longer than 2 s, the deadline" in failure(fake)


def test_a_gzip_bomb_is_refused_at_the_cap_with_little_memory(fake: FakeGitHub) -> None:
    fake.fault(MATCH, "bomb", size=1 << 30)
    assert len(gzip_bomb(1 << 30)) < 2 << 20  # built (and cached) before measuring
    tracemalloc.start()
    try:
        text = failure(fake)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "expands to more than 1 MB, the limit" in text
    assert peak < 64 << 20


def test_a_huge_body_is_refused_while_streaming(fake: FakeGitHub) -> None:
    fake.fault(MATCH, "huge", size=1 << 30)
    assert "larger than 1 MB, the limit" in failure(fake)


def test_bad_gzip_is_one_clear_error(fake: FakeGitHub) -> None:
    fake.fault(MATCH, "bad_gzip")
    assert "gzip data is damaged" in failure(fake)


def test_json_nested_200000_deep_is_one_clear_error(fake: FakeGitHub) -> None:
    fake.fault(MATCH, "deep", size=200_000)
    assert "nested too deeply" in failure(fake)


def test_a_redirect_loop_is_one_clear_error(fake: FakeGitHub) -> None:
    fake.fault(MATCH, "redirect_loop", times=-1)
    assert "more than 5 redirects (a redirect loop" in failure(fake)
    assert len(fake.requests) == 6


def test_a_write_does_not_follow_a_redirect(fake: FakeGitHub) -> None:
    fake.issues.add_repo("acme/widget")
    fake.fault(r"/issues$", "redirect", location="/repos/acme/widget/issues/elsewhere")
    with pytest.raises(GitHubError, match=r"HTTP 307"):
        client(fake).send("POST", "repos/acme/widget/issues", {"title": "t"})
    assert [r.method for r in fake.requests] == ["POST"]


@pytest.mark.parametrize("value", ["999999999", "inf", "1e300", "nan", "-5", "soon"])
def test_a_5xx_retry_after_is_capped_or_ignored(fake: FakeGitHub, value: str) -> None:
    fake.fault(MATCH, "status", status=503, headers={"Retry-After": value})
    sleeps = Sleeps()
    assert "login" in client(fake, sleeps, backoff=0.01).get(PATH)
    (slept,) = sleeps
    assert 0 <= slept <= LIMITS.max_wait


@pytest.mark.parametrize("value", ["inf", "1e300", "999999999", "-1", "soon"])
def test_a_rate_limit_retry_after_that_is_not_a_number_waits_the_secondary_default(
    fake: FakeGitHub, value: str
) -> None:
    message = "You have exceeded a secondary rate limit."
    fake.fault(MATCH, "status", status=403, message=message, headers={"Retry-After": value})
    sleeps = Sleeps()
    assert "login" in client(fake, sleeps, secondary_wait=1.0).get(PATH)
    assert sleeps == [1.0]


def test_a_long_rate_limit_retry_after_stops_with_one_line(fake: FakeGitHub) -> None:
    message = "You have exceeded a secondary rate limit."
    fake.fault(MATCH, "status", status=403, message=message, headers={"Retry-After": "86400"})
    text = failure(fake)
    assert "asks to wait 86400 s, more than [github] max_wait_seconds=300: re-run later" in text


def test_a_long_5xx_retry_after_is_cut_to_the_cap_and_said(
    fake: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fault(MATCH, "status", status=503, headers={"Retry-After": "3600"})
    sleeps = Sleeps()
    assert "login" in client(fake, sleeps).get(PATH)
    assert sleeps == [LIMITS.max_wait]
    assert "asked to wait 3600 s (Retry-After); waiting 120 s, the cap" in caplog.text


def test_a_rate_limit_reset_that_is_not_a_time_waits_a_bounded_default(fake: FakeGitHub) -> None:
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "soon"}
    message = "API rate limit exceeded for 127.0.0.1."
    fake.fault(MATCH, "status", status=403, message=message, headers=headers)
    sleeps = Sleeps()
    assert "login" in client(fake, sleeps, secondary_wait=1.0).get(PATH)
    assert sleeps == [1.0]


RUN_CASES = [
    ("deep", {"size": 200_000}, "is JSON nested too deeply to read"),
    ("bad_gzip", {}, "gzip data is damaged"),
    ("redirect_loop", {"times": -1}, "more than 5 redirects (a redirect loop"),
    ("bomb", {"size": 256 << 20}, "expands to more than 128 MB, the limit"),
]


@pytest.mark.parametrize(("kind", "kw", "expected"), RUN_CASES)
def test_a_hostile_answer_under_run_costs_one_line_and_spares_the_other_repository(
    tmp_path: Path, kind: str, kw: dict[str, Any], expected: str
) -> None:
    source = GitFixture.init(tmp_path / "src")
    mixed_day(source)
    with FakeGitHub() as gh:
        gh.add_repo("acme/widget", source.path)
        gh.fault(r"/branches/", kind, **kw)
        cfg = tmp_path / "repoherald.toml"
        cfg.write_text(
            f'[report]\ntz = "{TZ_NAME}"\n\n[github]\napi_url = "{gh.api_url}"\n\n'
            f'[[repos]]\nsource = "{source.path}"\nname = "good"\n\n'
            '[[repos]]\nsource = "github:acme/widget"\n',
            encoding="utf-8",
        )
        settings = build_settings(config=str(cfg), day=str(DAY), home=str(tmp_path / "home"))
        result = run(settings)
    (line,) = result.failures
    assert line.startswith("acme/widget: ") and expected in line and "\n" not in line
    twin = next(p for p in result.written if p.suffix == ".json")
    (good,) = [r for r in json.loads(twin.read_text())["repos"] if r["name"] == "good"]
    assert len(good["commits"]) == 10
