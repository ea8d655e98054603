"""The downstream check inside a run: links into a git checkout, the cached index, hostile paths.

Runs the pipeline in-process over the fixture pair, with the plugin as a real
git repository whose origin is on GitHub, so the ``file:line`` links must be
derived (pinned to its HEAD, with the subdirectory when a downstream entry is
one), and the index must follow the checkout when a file is edited.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import timedelta
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
from markdown_it import MarkdownIt

from repoherald.config import build_settings
from repoherald.pipeline.run import run
from repoherald.sources.checkout import index_checkout, index_key
from repoherald.store.db import SqliteStore as Store
from tests.downstream_pair import DAY, PLUGIN, build_upstream, write_plugin
from tests.gitfixture import GitFixture

DATE = "2026-03-02"


def run_day(tmp: Path, downstream: tuple[str, ...], lang: str = "en") -> tuple[str, dict[str, Any]]:
    """Report the fixture day of ``tmp/up`` with these downstream paths; (markdown, twin)."""
    settings = build_settings(
        repos=(str(tmp / "up"),), downstream=downstream, day=DATE, tz="UTC", lang=lang,
        out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    md_path = next(p for p in result.written if p.suffix == ".md")
    twin = json.loads(md_path.with_suffix(".json").read_text(encoding="utf-8"))
    return md_path.read_text(encoding="utf-8"), twin


def impacts(twin: dict[str, Any], project: int = 0) -> list[tuple[str, int, str | None]]:
    found = twin["repos"][0]["downstream"]["projects"][project]["impacts"]
    return [(i["path"], i["line"], i["url"]) for i in found]


def index_rows(tmp: Path) -> list[str]:
    with sqlite3.connect(tmp / "home" / "repoherald.db") as conn:
        return [row[0] for row in conn.execute("SELECT key FROM downstream_indexes")]


def test_links_pin_the_checkouts_head_and_the_index_follows_an_edit(tmp_path: Path) -> None:
    build_upstream(tmp_path / "up")
    plugin = GitFixture.init(tmp_path / "plugin")
    plugin.write_many({rel: dedent(text) for rel, text in PLUGIN.items()})
    head = plugin.commit("Plugin", when=DAY)
    plugin.git("remote", "add", "origin", "https://github.com/me/plugin.git")

    _, twin = run_day(tmp_path, ("plugin", "plugin/plug"))
    whole, sub = impacts(twin, 0), impacts(twin, 1)
    blob = f"https://github.com/me/plugin/blob/{head}"
    assert ("plug/attention.py", 2, f"{blob}/plug/attention.py#L2") in whole
    assert ("attention.py", 2, f"{blob}/plug/attention.py#L2") in sub
    assert ("tests/test_sampling.py", 4, f"{blob}/tests/test_sampling.py#L4") in whole
    assert not any(path.startswith("tests/") for path, _, _ in sub), "plug/ only"
    keys = index_rows(tmp_path)
    assert len(keys) == 2 and all(k.startswith(f"git:{head}:") for k in keys)

    fixed = PLUGIN["plug/attention.py"].replace("selector", "backend_registry")
    plugin.write("plug/attention.py", dedent(fixed))
    _, again = run_day(tmp_path, ("plugin",))
    assert [p for p, _, _ in impacts(again)] == [p for p, _, _ in whole if p != "plug/attention.py"]
    new_keys = index_rows(tmp_path)
    assert len(new_keys) == 2, "the edited checkout's index replaced its previous one"
    assert set(new_keys) != set(keys)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_downstream_paths_stay_inert(tmp_path: Path, lang: str) -> None:
    build_upstream(tmp_path / "up")
    root = write_plugin(tmp_path / "evil")
    name = "a](javascript:alert(1))<b>@someone`x`.py"
    (root / "plug" / name).write_text("from up.attention.selector import get_attn_backend\n")
    (tmp_path / "evil-cfg.toml").write_text(
        '[[repos]]\nsource = "up"\ndownstream = ["evil"]\n'
        'downstream_web_urls = { "evil" = "https://github.com/me/evil" }\n',
        encoding="utf-8",
    )
    settings = build_settings(
        config=str(tmp_path / "evil-cfg.toml"), day=DATE, tz="UTC", lang=lang,
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    md = next(p for p in result.written if p.suffix == ".md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    hrefs = [
        str(child.attrs["href"])
        for tok in tokens
        if tok.type == "inline"
        for child in tok.children or []
        if child.type == "link_open"
    ]
    assert all(h.startswith(("#", "https://github.com/")) for h in hrefs), hrefs
    assert not any("javascript:" in h for h in hrefs)
    assert "https://github.com/me/evil/blob/HEAD/plug/a%5D%28javascript%3Aalert" in md
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert "<b>" not in html
    outside_code = re.sub(r"<code>.*?</code>", "", html)
    assert "@someone" not in outside_code, "mentions outside code spans are defused"


HOSTILE_DEFAULT = "<img src=x onerror=alert(1)>[a](javascript:alert(1)) @someone `x` *y*"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_upstream_values_inside_details_stay_inert(tmp_path: Path, lang: str) -> None:
    up = GitFixture.init(tmp_path / "up")
    up.write_many({"up/__init__.py": "", "up/api.py": 'def load(path, mode="r"): ...\n'})
    up.commit("Initial import", when=DAY)
    up.write("up/api.py", f"def load(path, mode={HOSTILE_DEFAULT!r}): ...\n")
    up.commit("Change the default", when=DAY + timedelta(hours=1))
    (tmp_path / "plugin" / "plug").mkdir(parents=True)
    (tmp_path / "plugin" / "plug" / "use.py").write_text('from up.api import load\n\nload("p")\n')
    md, twin = run_day(tmp_path, ("plugin",), lang)
    (item,) = twin["repos"][0]["downstream"]["projects"][0]["impacts"]
    assert item["reason_code"] == "default_changed"
    said = {"zh": "mode 的默认值：'r' -> ", "en": "default of mode: 'r' -> "}[lang]
    assert item["detail"] == said + repr(HOSTILE_DEFAULT)
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    hrefs = [
        str(child.attrs["href"])
        for tok in tokens
        if tok.type == "inline"
        for child in tok.children or []
        if child.type == "link_open"
    ]
    assert all(h.startswith(("#", "https://github.com/")) for h in hrefs), hrefs
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert "<img" not in html and "<em>y</em>" not in html
    outside_code = re.sub(r"<code>.*?</code>", "", html)
    assert "@someone" not in outside_code, "mentions outside code spans are defused"
    assert {"zh": "的默认值", "en": "default of mode"}[lang] in html


def test_an_upstream_file_you_use_that_stops_parsing_is_counted(tmp_path: Path) -> None:
    up = GitFixture.init(tmp_path / "up")
    up.write_many({"up/__init__.py": "", "up/a.py": "def f(x):\n    return x\n"})
    up.commit("Base", when=DAY)
    up.write("up/a.py", "def f(x:\n")
    up.commit("Break the file", when=DAY + timedelta(hours=1))
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "use.py").write_text("from up.a import f\n\nf(1)\n")
    md, twin = run_day(tmp_path, ("plugin",))
    check = twin["repos"][0]["downstream"]
    assert check["upstream_unparsed"] == 1
    assert check["projects"][0]["impacts"] == [], "no guess about a file that does not parse"
    assert "1 changed upstream file that your code uses did not parse" in md


def test_the_cached_index_is_read_back_and_no_cache_rebuilds_it(tmp_path: Path) -> None:
    build_upstream(tmp_path / "up")
    root = write_plugin(tmp_path / "plugin")
    _, first = run_day(tmp_path, ("plugin",))
    assert len(impacts(first)) == 9
    # Stand in for "the checkout as it was indexed": the same key, fewer references.
    key = index_key(root, ("up",))
    with Store.open(tmp_path / "home" / "repoherald.db") as store:
        data = store.load_downstream_index(key)
        assert data is not None
        data["refs"] = [r for r in data["refs"] if r["path"] != "plug/attention.py"]
        store.save_downstream_index(key, f"{root.resolve()}\0up", data)
    _, cached = run_day(tmp_path, ("plugin",))
    assert [p for p, _, _ in impacts(cached)] == [
        p for p, _, _ in impacts(first) if p != "plug/attention.py"
    ]
    settings = build_settings(
        repos=(str(tmp_path / "up"),), downstream=("plugin",), day=DATE, tz="UTC", lang="en",
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    assert run(settings, use_cache=False).ok
    with Store.open(tmp_path / "home" / "repoherald.db") as store:
        stored = store.load_downstream_index(key)
    assert stored == index_checkout(root, ("up",)).to_dict(), "--no-cache indexed it again"


def test_the_upstream_package_is_guessed_from_the_repositorys_own_name(tmp_path: Path) -> None:
    """A display name (``name = ...``) is what the report shows, not what the code imports."""
    upstream, _ = build_upstream(tmp_path / "up")
    upstream.write_many({f"zoo/m{i}.py": "X = 1\n" for i in range(40)} | {"zoo/__init__.py": ""})
    upstream.commit("Add a bigger package", when=DAY - timedelta(days=1))
    write_plugin(tmp_path / "plugin")
    (tmp_path / "named.toml").write_text(
        '[[repos]]\nsource = "up"\nname = "Acme Display"\ndownstream = ["plugin"]\n',
        encoding="utf-8",
    )
    settings = build_settings(
        config=str(tmp_path / "named.toml"), day=DATE, tz="UTC", lang="en",
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    (repo,) = twin["repos"]
    assert repo["name"] == "Acme Display"
    assert repo["downstream"]["packages"] == ["up"]
    assert impacts(twin), "the plugin's imports of up are checked"
