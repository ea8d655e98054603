"""The README's Feishu + GitHub issue example works as written (issue 10).

The configuration is read from README.md itself (the block after the
``readme-example: feishu-and-issue`` marker), so the test follows the README
instead of a copy that could drift from it. First it is loaded exactly as
written; then ``repoherald run`` runs on it end to end, with only what must
change to stay on this machine changed in the parsed TOML: each ``source``
becomes a local fixture clone (whose ``origin`` is the README's URL, as in a
real clone, so names, commit links and pull-request lookups are the ones a
user gets), ``[github] api_url`` becomes FakeGitHub, and the webhook URL's
variable names a loopback Feishu receiver that checks the signature and the
card. Names, labels, the title template, ``close_previous``, ``report_url``
and the time zone are used as written.
"""

from __future__ import annotations

import json
import re
import sqlite3
import tomllib
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest

from repoherald.config import DEFAULT_GITHUB_API, Settings, build_settings
from repoherald.github.pulls import PullRequestLookup
from repoherald.publish import registry
from repoherald.sources.git.mirror import parse_remote
from repoherald.sources.git.naming import identity_from_url
from repoherald.sources.registry import display_name
from tests.gitfixture import GitFixture, run_repoherald
from tests.github_server import FakeGitHub
from tests.webhook_server import WebhookServer, webhook_server

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- readme-example: feishu-and-issue -->"

TOKEN = "ghp_readmeExampleTokenNeverShown0123"
SECRET = "feishu-robot-signing-secret-7Qx2"
HOOK_PATH_TOKEN = "b7e1c0de-robot-token-never-shown"
DUMMY_HOOK = "https://open.feishu.cn/open-apis/bot/v2/hook/00000000-dummy"


def readme_example() -> str:
    """The TOML block right after the marker; fails loudly when either is gone."""
    text = README.read_text(encoding="utf-8")
    if text.count(MARKER) != 1:
        pytest.fail(f"README.md must contain {MARKER!r} exactly once (found {text.count(MARKER)})")
    after = text.split(MARKER, 1)[1]
    block = re.match(r"\s*```toml\n(.*?)^```[ \t]*$", after, re.DOTALL | re.MULTILINE)
    if block is None:
        pytest.fail(f"README.md: no ```toml block right after {MARKER!r}")
    return block.group(1)


def _targets(cfg: dict[str, Any], **kinds: str) -> dict[str, dict[str, Any]]:
    """The ``[[publish]]`` tables of the example by role (``kinds``: role -> type/kind)."""
    found: dict[str, dict[str, Any]] = {}
    for role, wanted in kinds.items():
        matches = [t for t in cfg.get("publish", []) if _kind(t) == wanted]
        assert len(matches) == 1, f"the README example needs one [[publish]] {wanted}"
        found[role] = matches[0]
    return found


def _kind(table: dict[str, Any]) -> str:
    return f"{table['type']}/{table['kind']}" if "kind" in table else str(table["type"])


def _env_names(cfg: dict[str, Any]) -> dict[str, str]:
    """Every environment variable the example names -> the setting that names it."""
    names = {cfg["github"]["token_env"]: "github.token_env"}
    for i, table in enumerate(cfg["publish"]):
        for key in ("url_env", "secret_env", "token_env"):
            if key in table:
                names[table[key]] = f"publish.{i}.{key}"
    return names


def test_the_readme_example_loads_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = readme_example()
    cfg = tomllib.loads(text)
    roles = _targets(cfg, feishu="webhook/feishu", issue="github_issue")
    names = _env_names(cfg)
    assert set(names) == {"GITHUB_TOKEN", "FEISHU_WEBHOOK_URL", "FEISHU_WEBHOOK_SECRET"}
    for name in names:
        monkeypatch.setenv(name, DUMMY_HOOK if name == roles["feishu"]["url_env"] else TOKEN)
    path = tmp_path / "repoherald.toml"
    path.write_text(text, encoding="utf-8")

    settings = build_settings(config=str(path), home=str(tmp_path / "home"), cwd=tmp_path)

    assert settings.tz_name == cfg["report"]["tz"] == "Asia/Shanghai"
    assert settings.github.api_url == DEFAULT_GITHUB_API and settings.github.token_env_explicit
    by_name = {t.name: t.target for t in registry.build_all(settings.publish)}
    assert list(by_name) == [t["name"] for t in cfg["publish"]]
    feishu = by_name[roles["feishu"]["name"]].publisher.options  # type: ignore[attr-defined]
    assert feishu.kind == "feishu"
    for key in ("url_env", "secret_env", "report_url"):
        assert getattr(feishu, key) == roles["feishu"][key], key
    issue = by_name[roles["issue"]["name"]].publisher.options  # type: ignore[attr-defined]
    for key in ("repo", "labels", "title", "close_previous"):
        assert getattr(issue, key) == roles["issue"][key], key
    # Inherited from [github]: the issues are written with the same token.
    assert (issue.api_url, issue.token_env) == (DEFAULT_GITHUB_API, cfg["github"]["token_env"])
    assert all(t.repos is None for t in by_name.values())  # every repository goes to both
    _check_repositories(settings, cfg)


def _check_repositories(settings: Settings, cfg: dict[str, Any]) -> None:
    """Each repository opens as a GitHub clone URL with the configured name, commit links
    on github.com and pull-request context through ``[github]`` (all without the network)."""
    assert len(settings.repos) == len(cfg["repos"]) == 3
    for repo, table in zip(settings.repos, cfg["repos"], strict=True):
        assert repo.source == table["source"] and repo.name == table["name"]
        remote = parse_remote(repo.source)
        assert remote.transport == "https" and not remote.has_credentials
        assert display_name(repo) == table["name"]
        web_url = identity_from_url(repo.source).web_url
        assert web_url == table["source"]
        lookup = PullRequestLookup.for_git(repo.github, web_url, settings.github, None, "x")
        assert lookup is not None, f"{repo.name}: no pull-request context with GITHUB_TOKEN set"


# -- end to end -------------------------------------------------------------------------


def _to_toml(cfg: dict[str, Any]) -> str:
    """Write the parsed example back (tables, arrays of tables, strings, booleans, lists).

    JSON strings are valid TOML basic strings (same escapes), so the Chinese
    title and every URL come back unchanged; the caller checks the round trip.
    """

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float | str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(f"not in the README example: {v!r}")

    def pairs(table: dict[str, Any]) -> list[str]:
        return [f"{k} = {value(v)}" for k, v in table.items()]

    out: list[str] = []
    for key, item in cfg.items():
        if isinstance(item, dict):
            out += [f"[{key}]", *pairs(item), ""]
        elif isinstance(item, list) and item and all(isinstance(x, dict) for x in item):
            for table in item:
                out += [f"[[{key}]]", *pairs(table), ""]
        else:
            out.insert(0, f"{key} = {value(item)}")
    return "\n".join(out)


def _upstream(
    path: Path, url: str, name: str, days: list[date], tz: ZoneInfo
) -> dict[tuple[str, str], str]:
    """A clone of ``url`` (its origin) with two commits on each of ``days`` in ``tz``;
    returns (name, day) -> the web link of that day's 🔴 commit."""
    fx = GitFixture.init(path)
    fx.git("remote", "add", "origin", url)
    links = {}
    for day in days:
        for hour in (9, 17):
            fx.write(f"{name}/sched_{day:%d}_{hour}.py", f"def step():\n    return {hour}\n")
            sha = fx.commit(_title(name, day, hour), when=datetime.combine(day, time(hour), tz))
            if hour < 12:
                links[name, day.isoformat()] = f"{url}/commit/{sha}"
    return links


def _title(name: str, day: date, hour: int) -> str:
    """The morning commit is a revert of a feature (🔴, so the card lists it), the evening one
    an ordinary fix (🟡, counted only)."""
    if hour < 12:
        return f'Revert "[Feature] Add {name} scheduler ({day})"'
    return f"Fix {name} scheduler race ({day})"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def _card(got: Any) -> tuple[str, str, list[str]]:
    """A Feishu card's header title, its text and the links in that text."""
    card = got.data["card"]
    text = "\n".join(e["text"]["content"] for e in card["elements"] if e["tag"] == "div")
    return card["header"]["title"]["content"], text, re.findall(r"\]\((\S+?)\)", text)


def _leaks(root: Path, secrets: list[str]) -> list[str]:
    """Files under ``root`` holding a secret (raw bytes, and SQLite's dump for databases)."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        texts = [data.decode("utf-8", "replace")]
        if data.startswith(b"SQLite format 3\x00"):
            with sqlite3.connect(path) as db:
                texts.append("\n".join(db.iterdump()))
        found += [f"{path}: {s[:6]}..." for s in secrets if any(s in t for t in texts)]
    return found


def test_the_readme_example_runs_end_to_end(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tomllib.loads(readme_example())
    roles = _targets(cfg, feishu="webhook/feishu", issue="github_issue")
    tz = ZoneInfo(cfg["report"]["tz"])
    today = datetime.now(tz).date()
    day_before, yesterday = today - timedelta(days=2), today - timedelta(days=1)
    days = [day_before, yesterday]

    # The substitutions, on the parsed TOML: local clones, FakeGitHub. Nothing else.
    commit_links: dict[tuple[str, str], str] = {}
    full_names = []
    for table in cfg["repos"]:
        full_name = urlsplit(table["source"]).path.strip("/")
        full_names.append(full_name)
        clone = tmp_path / "upstream" / full_name
        commit_links |= _upstream(clone, table["source"], table["name"], days, tz)
        fake.add_repo(full_name, clone)  # pull-request lookups of the clone's commits
        table["source"] = str(clone)
    cfg["github"]["api_url"] = fake.api_url
    issue_repo = roles["issue"]["repo"]
    fake.issues.add_repo(issue_repo)
    config = tmp_path / "work" / "repoherald.toml"
    config.parent.mkdir()
    config.write_text(_to_toml(cfg), encoding="utf-8")
    assert tomllib.loads(config.read_text(encoding="utf-8")) == cfg

    with webhook_server(SECRET) as hook:
        hook_url = f"{hook.url}/{roles['feishu']['kind']}/{HOOK_PATH_TOKEN}"
        monkeypatch.setenv(roles["feishu"]["url_env"], hook_url)
        monkeypatch.setenv(roles["feishu"]["secret_env"], SECRET)
        monkeypatch.setenv(cfg["github"]["token_env"], TOKEN)
        outputs: list[str] = []

        def run(*args: str) -> None:
            home = str(tmp_path / "home")
            proc = run_repoherald("run", "--config", str(config), "--home", home, *args,
                                  cwd=tmp_path)  # fmt: skip
            outputs.append(proc.stdout + proc.stderr)
            assert proc.returncode == 0, outputs[-1]

        run("--date", day_before.isoformat())  # yesterday's scheduled run
        run()  # today's: catches up yesterday and closes the day before's issues
        _check_cards(hook, roles["feishu"], commit_links, config.parent)
        _check_issues(fake, cfg, roles["issue"], days)
        assert all(r.authorization == f"Bearer {TOKEN}" for r in fake.requests)
        # Pull-request context of every upstream went through [github] with the same token,
        # one GraphQL query per repository-day.
        looked_up = {
            "{owner}/{name}".format(**r.body["variables"])
            for r in fake.requests
            if r.path == "/graphql"
        }
        assert looked_up == set(full_names)

        sent = len(hook.received)
        fake.clear()
        run()  # nothing new: nothing is sent again
        assert len(hook.received) == sent
        assert [(r.method, r.path) for r in fake.requests if r.method != "GET"] == []
        assert "up to date" in outputs[-1]

    secrets = [TOKEN, SECRET, hook_url, HOOK_PATH_TOKEN]
    for out in outputs:
        assert not [s for s in secrets if s in out], out
    assert (config.parent / "reports").is_dir()
    assert _leaks(config.parent / "reports", secrets) == []
    assert _leaks(tmp_path / "home", secrets) == []
    assert (tmp_path / "home" / "repoherald.db").is_file()


def _check_cards(
    hook: WebhookServer, table: dict[str, Any], commit_links: dict[tuple[str, str], str],
    base: Path,
) -> None:  # fmt: skip
    """One signed, well-formed card per repository-day: its 🔴 commit on github.com, then
    the report_url filled in for that repository and day."""
    assert [r.problems for r in hook.received if r.problems] == []
    cards = hook.accepted(table["kind"])
    assert len(cards) == len(hook.received) == len(commit_links)
    seen = set()
    for got in cards:
        title, text, links = _card(got)
        name, _, day = title.partition(" · ")
        seen.add((name, day))
        # A Chinese report: its archive file name has no language tag.
        url = table["report_url"].format(year=day[:4], name=name, date=day, suffix="")
        assert links == [commit_links[name, day], url], title
        assert "共 2 个提交：🔴 1 · 🟡 1" in text, text
        # The link names the file the archive wrote, in the repository it is pushed to.
        assert (base / url.split("/blob/main/", 1)[1]).is_file(), url
    assert seen == set(commit_links)


def _check_issues(
    fake: FakeGitHub, cfg: dict[str, Any], table: dict[str, Any], days: list[date]
) -> None:
    """One issue per repository-day, titled and labelled as configured; only the newest open."""
    issues = fake.issues.issues(table["repo"])
    assert len(issues) == len(cfg["repos"]) * len(days)
    by_title = {i["title"]: i for i in issues}
    for repo in cfg["repos"]:
        for day in days:
            title = table["title"].format(name=repo["name"], date=day.isoformat(), lang="zh")
            issue = by_title[title]
            assert [label["name"] for label in issue["labels"]] == table["labels"]
            assert _title(repo["name"], day, 17) in issue["body"]
            open_ = day == days[-1] or not table["close_previous"]
            assert issue["state"] == ("open" if open_ else "closed"), title
