"""One model pool per run: every repository's requests share ``concurrency`` and the budget.

The loopback server answers after a fixed latency and counts the requests in
flight at once; the tests assert that count and what the reports say, never
a duration.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline.service import ServiceResult, run_all
from tests.gitfixture import GitFixture
from tests.integration.test_llm import good
from tests.integration.test_llm_unavailable import build_day
from tests.llm_server import FakeLLM, Reply, last_user_message
from tests.webhook_server import webhook_server

DAY = "2026-05-01"
NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
PER_REPO = 2
CONCURRENCY = 4
"""More than one repository's commits: only repositories overlapping can fill it."""


def _org(tmp_path: Path, url: str, llm: str = "", extra: str = "") -> Path:
    """A config with the repositories of NAMES, ``PER_REPO`` commits each on DAY."""
    entries = []
    for name in NAMES:
        repo = GitFixture.init(tmp_path / name)
        repo.write("README.md", f"# {name}\n")  # SHAs of each repository its own
        repo.commit(f"Start {name}", when="2026-04-01T01:00:00+00:00")
        build_day(repo, DAY, PER_REPO)
        entries.append(f'[[repos]]\nsource = "{repo.path}"\nname = "{name}"\n')
    config = tmp_path / "repoherald.toml"
    config.write_text(
        f'[report]\ntz = "UTC"\nlang = "en"\nout = "out"\n\n[llm]\nbase_url = "{url}"\n'
        f'model = "m"\nmax_retries = 0\n{llm}\n' + "\n".join(entries) + extra,
        encoding="utf-8",
    )
    return config


def _run(tmp_path: Path, config: Path, home: str = "home") -> ServiceResult:
    settings = build_settings(config=str(config), day=DAY, home=str(tmp_path / home))
    return run_all(settings, catch_up=False)


def _analyses(out: Path, name: str) -> list[dict[str, Any]]:
    twin = json.loads((out / f"2026/{name}/{DAY}.en.json").read_text("utf-8"))
    return [c["analysis"] for c in twin["repos"][0]["commits"]]


def _without_time(markdown: str) -> str:
    """The report without the moment it was generated at (the one line two runs differ in)."""
    return re.sub(r"\d{4}-\d\d-\d\dT?\s?\d\d:\d\d(:\d\d)?\S*", "<time>", markdown)


def test_requests_of_every_repository_share_the_pool(tmp_path: Path) -> None:
    with FakeLLM(lambda body, attempt: good(body), latency=0.4) as server:
        config = _org(tmp_path, server.base_url, f"concurrency = {CONCURRENCY}")
        result = _run(tmp_path, config)
        peak = server.max_concurrency
        sent = len(server.chat_requests)
    assert result.ok, result.failures
    assert peak == CONCURRENCY, f"at most {peak} requests in flight across the repositories"
    assert sent == len(NAMES) * PER_REPO
    for name in NAMES:
        assert all(a["analyser"].startswith("llm/") for a in _analyses(tmp_path / "out", name))


def test_reports_are_those_of_one_repository_at_a_time(tmp_path: Path) -> None:
    """Overlapping repositories change when a report is written, not what it says."""
    with FakeLLM(lambda body, attempt: good(body), latency=0.1) as server:
        config = _org(tmp_path, server.base_url, f"concurrency = {CONCURRENCY}")
        assert _run(tmp_path, config, "pooled").ok
        pooled = {n: (tmp_path / f"out/2026/{n}/{DAY}.en.md").read_text("utf-8") for n in NAMES}
        config.write_text(
            config.read_text("utf-8").replace(f"concurrency = {CONCURRENCY}", "concurrency = 1"),
            encoding="utf-8",
        )
        for name in NAMES:
            settings = build_settings(
                config=str(config), day=DAY, home=str(tmp_path / f"alone-{name}"),
                out=str(tmp_path / "alone"),
            )  # fmt: skip
            assert run_all(settings, catch_up=False, only=(name,)).ok
    for name in NAMES:
        alone = (tmp_path / f"alone/2026/{name}/{DAY}.en.md").read_text("utf-8")
        assert _without_time(alone) == _without_time(pooled[name]), name


def test_a_broken_repository_costs_only_itself(tmp_path: Path) -> None:
    missing = '\n[[repos]]\nsource = "no-such-clone"\nname = "gone"\n'
    with FakeLLM(lambda body, attempt: good(body), latency=0.1) as server:
        config = _org(tmp_path, server.base_url, f"concurrency = {CONCURRENCY}", missing)
        result = _run(tmp_path, config)
    gone = [o for o in result.outcomes if o.name == "gone"]
    assert len(gone) == 1 and gone[0].error and not result.ok
    assert [f for f in result.failures if f.startswith("gone")] == result.failures
    for name in NAMES:
        assert all(a["analyser"].startswith("llm/") for a in _analyses(tmp_path / "out", name))


def test_the_token_budget_bounds_the_run_not_each_repository(tmp_path: Path) -> None:
    budget = 6000
    """More than one request of these commits reserves, far less than twelve."""
    with FakeLLM(lambda body, attempt: good(body)) as server:
        config = _org(tmp_path, server.base_url, f"concurrency = 1\ntoken_budget = {budget}")
        result = _run(tmp_path, config)
    spent = [sum(o.result.llm_tokens) for o in result.outcomes if o.result is not None]
    assert 0 < sum(spent) <= budget, spent
    modelled = [
        a for n in NAMES for a in _analyses(tmp_path / "out", n) if a["analyser"].startswith("llm/")
    ]
    assert 0 < len(modelled) < len(NAMES) * PER_REPO


def test_deliveries_keep_the_configuration_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first repository's answers come last; its day is still delivered first.

    ``concurrency`` leaves a slot for the second repository's request beside
    the first's four, so its answer comes first."""
    entries = ""
    for name, commits in (("slow", 4), ("quick", 1)):
        repo = GitFixture.init(tmp_path / name)
        for i in range(commits):
            repo.write(f"src/{name}_{i}.py", f"def f_{i}(x):\n    return x + {i}\n")
            repo.commit(f"Add {name} module {i}", when=f"{DAY}T0{i + 1}:00:00+00:00")
        entries += f'[[repos]]\nsource = "{name}"\nname = "{name}"\n\n'

    def answer(body: dict[str, Any], attempt: int) -> Reply:
        reply = good(body)
        slow = "Add slow module" in last_user_message(body)
        return dataclasses.replace(reply, delay=0.5) if slow else reply

    with FakeLLM(answer) as server, webhook_server("hook-secret") as hook:
        monkeypatch.setenv("HOOK_URL", f"{hook.url}/json/x")
        monkeypatch.setenv("HOOK_SECRET", "hook-secret")
        config = tmp_path / "repoherald.toml"
        config.write_text(
            f'[report]\ntz = "UTC"\nlang = "en"\nout = "out"\n\n[llm]\nbase_url ='
            f' "{server.base_url}"\nmodel = "m"\nmax_retries = 0\nconcurrency = 8\n\n'
            + entries
            + '[[publish]]\ntype = "webhook"\nname = "hook"\nkind = "json"\n'
            'url_env = "HOOK_URL"\nsecret_env = "HOOK_SECRET"\nretry_delay = 0\n',
            encoding="utf-8",
        )
        result = _run(tmp_path, config)
        sent = [r.data["repos"][0]["name"] for r in hook.accepted("json")]
    assert result.ok, result.failures
    assert sent == ["slow", "quick"]
