"""The real CLI on the fixture pair: "Affects your code" end to end, and nothing else changed.

The upstream history breaks the plugin five ways (see :mod:`tests.downstream_pair`);
``repoherald report`` runs with a ``repoherald.toml`` that names the plugin as a
downstream checkout and watches two globs. The report must list every break
at its ``file:line`` (linked into the plugin's repository), make each commit
that hits 🔴 with the line named, carry all of it in the JSON twin, and keep
every internal link resolvable. Without ``downstream``/``watch`` nothing may
change.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.downstream_pair import EXPECTED, NOT_CHECKED, build_upstream, write_plugin
from tests.gitfixture import run_repoherald
from tests.markdown_links import heading_ids_and_links

DATE = "2026-03-02"
PLUGIN_URL = "https://github.com/me/plugin"
HEADING = {"zh": "### ⚠️ 影响你的代码", "en": "### ⚠️ Affects your code"}
REPO = '[[repos]]\nsource = "../up"\nname = "acme/up"\nweb_url = "https://github.com/acme/up"\n'


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A workspace with the upstream repository ``up`` and the plugin checkout ``plugin``."""
    base = tmp_path_factory.mktemp("pair")
    _, shas = build_upstream(base / "up")
    write_plugin(base / "plugin")
    (base / "quiet").mkdir()
    (base / "quiet" / "uses_only_the_package.py").write_text("import up\n\nprint(up)\n")
    return base, shas


def report(base: Path, toml: str, lang: str, name: str) -> tuple[int, str, str, dict[str, Any]]:
    """Run ``report`` for the day with ``toml`` as the config; (status, stderr, md, twin)."""
    work = base / f"run-{name}"
    work.mkdir()
    (work / "repoherald.toml").write_text(toml, encoding="utf-8")
    proc = run_repoherald(
        "report", "--date", DATE, "--tz", "UTC", "--lang", lang, "--home", str(base / "home"),
        cwd=work,
    )  # fmt: skip
    md_path = Path(next(x for x in proc.stdout.splitlines() if x.endswith(".md")))
    md = md_path.read_text(encoding="utf-8")
    twin = json.loads(md_path.with_suffix(".json").read_text(encoding="utf-8"))
    return proc.returncode, proc.stderr, md, twin


def with_plugin(downstream: str = '["../plugin"]') -> str:
    return (
        REPO + f"downstream = {downstream}\n"
        f'downstream_web_urls = {{ "../plugin" = "{PLUGIN_URL}" }}\n'
        'watch = ["up/attention/**", "csrc/**"]\n'
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_break_is_listed_at_its_line_and_its_commit_is_red(
    pair: tuple[Path, dict[str, str]], lang: str
) -> None:
    base, shas = pair
    code, err, md, twin = report(base, with_plugin(), lang, f"full-{lang}")
    assert code == 0, err
    section = twin["repos"][0]
    (project,) = section["downstream"]["projects"]
    found = {
        (i["kind"], i["reason_code"], i["upstream"], i["path"], i["line"], i["sha"])
        for i in project["impacts"]
    }
    expected = {(*item, shas[label]) for label, items in EXPECTED.items() for item in items}
    assert found == expected
    assert project["not_checked"] == NOT_CHECKED
    assert project["path"] == "../plugin", "shown as configured, not as an absolute path"
    assert section["downstream"]["packages"] == ["up"]
    for i in project["impacts"]:
        url = f"{PLUGIN_URL}/blob/HEAD/{i['path']}#L{i['line']}"
        assert i["url"] == url
        assert f"[`{i['path']}:{i['line']}`]({url})" in md
    assert section["downstream"]["watch_hits"] == [
        {
            "glob": "up/attention/**",
            "paths": ["up/attention/selector.py", "up/attention/backend_registry.py"],
            "sha": shas["rename_module"],
            "commit_anchor": _anchor(section, shas["rename_module"]),
        },
        {
            "glob": "up/attention/**",
            "paths": ["up/attention/__init__.py", "up/attention/selector.py"],
            "sha": shas["base"],
            "commit_anchor": _anchor(section, shas["base"]),
        },
    ]
    commits = {c["sha"]: c for c in section["commits"]}
    for label, items in EXPECTED.items():
        analysis = commits[shas[label]]["analysis"]
        assert analysis["importance"] == "high", label
        first = min(items, key=lambda i: (i[0] != "breaks", i[3], i[4]))
        assert f"`{first[3]}:{first[4]}`" in analysis["reasons"][0], label
    assert "up/attention/" in commits[shas["base"]]["analysis"]["reasons"][0]
    _assert_links_resolve(md, section["downstream"]["anchor"])
    top = md.index("## acme/up")
    assert md.index(HEADING[lang], top) < md.index("| ", top), "the section opens the repository"


ENGLISH_DETAILS = (
    "does not accept the new parameter",
    "default of",
    "was removed",
    "moved to",
    "was renamed to",
    "is no longer",
    "the fallback runs now",
    "the handler runs now",
    "missing required argument",
    "which the base class no longer has",
)
"""Pieces of the English details; none may appear in a Chinese report's affects section."""


def test_the_details_of_each_item_are_in_the_report_language(
    pair: tuple[Path, dict[str, str]],
) -> None:
    base, _ = pair
    twins: dict[str, list[dict[str, Any]]] = {}
    for lang, end in (("zh", "**关注的路径**"), ("en", "**Watched paths**")):
        code, err, md, twin = report(base, with_plugin(), lang, f"words-{lang}")
        assert code == 0, err
        start = md.index(HEADING[lang])
        twins[lang] = twin["repos"][0]["downstream"]["projects"][0]["impacts"]
        if lang == "zh":
            section = md[start : md.index(end, start)]
            assert [p for p in ENGLISH_DETAILS if p in section] == []
            assert (
                "（plug.worker.PluginWorker.execute_model：不接受新参数 intermediate_tensors"
                in section
            )
            assert "（--gpu-memory-utilization 的默认值：0.9 -\\> 0.92）" in section
            assert "（" not in section.split("plug/attention.py#L2)")[1].split("\n")[0], (
                "a detail that only restates the item is left out"
            )
        else:
            assert "(plug.worker.PluginWorker.execute_model does not accept the new parameter" in md
            assert "(default of --gpu-memory-utilization: 0.9 -\\> 0.92)" in md
    details = {lang: {(i["path"], i["line"]): i["detail"] for i in twins[lang]} for lang in twins}
    assert details["zh"][("plug/launch.py", 8)] == "--gpu-memory-utilization 的默认值：0.9 -> 0.92"
    assert (
        details["en"][("plug/launch.py", 8)] == "default of --gpu-memory-utilization: 0.9 -> 0.92"
    )
    assert details["zh"][("plug/env.py", 6)] == "UP_FAST_PATH 已不再被读取"
    assert details["en"][("plug/env.py", 6)] == "UP_FAST_PATH is no longer read"
    neutral = [[i["detail_message"] for i in twins[lang]] for lang in ("zh", "en")]
    assert neutral[0] == neutral[1], "the neutral form does not depend on the language"
    assert {"code": "ds.d.default", "args": {"name": "--gpu-memory-utilization", "old": "0.9",
            "new": "0.92"}} in neutral[0]  # fmt: skip


def _anchor(section: dict[str, Any], sha: str) -> str:
    return str(next(c["anchor"] for c in section["commits"] if c["sha"] == sha))


def _assert_links_resolve(md: str, section_anchor: str) -> None:
    ids, links, heads = heading_ids_and_links(md)
    assert section_anchor in ids and section_anchor in links, "the TOC links to the section"
    assert [link for link in links if link not in ids] == []
    levels = [level for level, _ in heads]
    for prev, cur in itertools.pairwise(levels):
        assert cur <= prev + 1, "heading levels do not jump"


def test_without_downstream_or_watch_nothing_changes_and_a_quiet_check_only_adds_its_section(
    pair: tuple[Path, dict[str, str]],
) -> None:
    base, _ = pair
    code, err, plain_md, plain = report(base, REPO, "zh", "plain")
    assert code == 0, err
    assert "影响你的代码" not in plain_md
    assert "downstream" not in plain["repos"][0]
    code, err, quiet_md, quiet = report(base, REPO + 'downstream = ["../quiet"]\n', "zh", "quiet")
    assert code == 0, err
    check = quiet["repos"][0].pop("downstream")
    assert check["projects"][0]["impacts"] == [] and check["projects"][0]["files"] == 1
    assert "本日的提交不影响这里的代码。" in quiet_md
    assert _normalised(quiet) == _normalised(plain), "no commit's analysis or rank moves"
    toc_line = re.compile(r"^  - \[⚠️ 影响你的代码\]\(#[^)]*\)\n", re.MULTILINE)
    section = re.compile(r"^### ⚠️ 影响你的代码\n.*?(?=^分支 )", re.MULTILINE | re.DOTALL)
    stripped = section.sub("", toc_line.sub("", quiet_md, count=1), count=1)
    assert _generated(stripped) == _generated(plain_md)


def _normalised(twin: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in twin.items() if k != "generated_at"}


def _generated(md: str) -> str:
    return re.sub(r"生成时间：.*", "生成时间：X", md)


def test_bad_downstream_paths_are_named_and_the_report_still_comes_out(
    pair: tuple[Path, dict[str, str]],
) -> None:
    base, shas = pair
    (base / "afile.txt").write_text("not a checkout\n")
    (base / "empty").mkdir()
    (base / "empty" / "README.md").write_text("# no code here\n")
    (base / "unrelated").mkdir()
    (base / "unrelated" / "tool.py").write_text("import json\n\nprint(json.dumps({}))\n")
    odd = base / "odd"
    odd.mkdir()
    (odd / "uses.py").write_text("from up.attention.selector import get_attn_backend\n")
    (odd / "broken.py").write_text("import up\n\ndef f(:\n")
    (odd / "generated.py").write_bytes(b"import up\n" + b"x = 1\n" * 400_000)
    (odd / "loop").symlink_to(odd, target_is_directory=True)
    toml = REPO + (
        'downstream = ["../missing", "../afile.txt", "../empty", "../unrelated", "../odd"]\n'
        'watch = ["nothing/**"]\n'
    )
    code, err, md, twin = report(base, toml, "en", "bad")
    assert code == 1, "a downstream path that cannot be checked is a failure of the run"
    lines = err.splitlines()
    assert len([x for x in lines if "../missing" in x and "does not exist" in x]) == 1
    assert len([x for x in lines if "../afile.txt" in x and "is not a directory" in x]) == 1
    assert len([x for x in lines if "../empty" in x and "no Python files" in x]) == 1
    assert "Traceback" not in err
    projects = {p["path"]: p for p in twin["repos"][0]["downstream"]["projects"]}
    assert "`../missing` does not exist" in projects["../missing"]["note"]
    assert "`../afile.txt` is not a directory" in projects["../afile.txt"]["note"]
    assert "has no Python files" in projects["../empty"]["note"]
    assert "does not use up anywhere" in projects["../unrelated"]["note"]
    assert projects["../unrelated"]["files"] == 1
    assert projects["../odd"]["not_checked"] == {"syntax": 1, "too_large": 1}
    assert projects["../odd"]["excluded"] == ["loop"]
    assert [(i["path"], i["line"], i["sha"]) for i in projects["../odd"]["impacts"]] == [
        ("uses.py", 1, shas["rename_module"])
    ]
    assert "No commit of this day touches `nothing/**`." in md
    assert md.count("does not exist, so it was not checked") == 1


def test_a_bad_watch_glob_is_a_usage_error_before_anything_is_read(
    pair: tuple[Path, dict[str, str]],
) -> None:
    base, _ = pair
    work = base / "badglob"
    work.mkdir()
    (work / "repoherald.toml").write_text(REPO + 'watch = ["../up/**"]\n', encoding="utf-8")
    proc = run_repoherald("report", "--date", DATE, "--home", str(base / "home"), cwd=work)
    assert proc.returncode == 2
    assert "repos.0.watch" in proc.stderr and "'..'" in proc.stderr
    assert not (work / "reports").exists()
