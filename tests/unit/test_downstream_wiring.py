"""The downstream settings and the pure parts of the pipeline step.

Which upstream packages are searched for, how a repository's config and the
flags describe its downstream checkouts and watch globs (and which mistakes
are usage errors), and how a commit that affects the reader's code is
raised to 🔴 with the line named.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.config.downstream import Downstream
from repoherald.errors import UsageError
from repoherald.i18n import localise
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    DownstreamImpact,
    Entry,
    Facts,
    Importance,
    Person,
    Text,
    WatchHit,
)
from repoherald.pipeline.downstream import derive_packages, raise_importance

NOW = datetime(2026, 3, 3, 12, tzinfo=UTC)


def files(*paths: str) -> list[tuple[str, str]]:
    return [(p, "0" * 40) for p in paths]


@pytest.mark.parametrize(
    ("listing", "name", "expected"),
    [
        # The name says which package: tools/ is a package too, but not the library.
        (files("vllm/__init__.py", "vllm/a.py", "tools/__init__.py", "tools/x.py", "tools/y.py",
               "tests/__init__.py", "setup.py"), "vllm-project/vllm", ("vllm",)),
        # pytorch/ao ships torchao: the biggest library package wins, tests never do.
        (files("torchao/__init__.py", "torchao/a.py", "torchao/b.py", "test/__init__.py",
               "test/t1.py", "test/t2.py", "test/t3.py", "packaging/__init__.py"),
         "pytorch/ao", ("torchao",)),
        (files("src/acme_sdk/__init__.py", "src/acme_sdk/core.py"), "acme/sdk", ("acme_sdk",)),
        (files("README.md", "scripts/run.py"), "me/vllm-plugin", ("vllm_plugin",)),
        (None, "vllm-project/vllm-ascend", ("vllm_ascend",)),
        (None, "x/3d", ()),
    ],
)  # fmt: skip
def test_upstream_packages_come_from_the_tree(
    listing: list[tuple[str, str]] | None, name: str, expected: tuple[str, ...]
) -> None:
    assert derive_packages(listing, name) == expected


def config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "conf" / "repoherald.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[[repos]]\nsource = "github:vllm-project/vllm"\n' + body, encoding="utf-8")
    return path


def settings_from(tmp_path: Path, body: str, **flags: object) -> tuple[Downstream, ...]:
    s = build_settings(config=str(config(tmp_path, body)), now=NOW, cwd=tmp_path, **flags)  # type: ignore[arg-type]
    return s.repos[0].downstream


def test_downstream_paths_resolve_against_the_config_file_and_keep_their_spelling(
    tmp_path: Path,
) -> None:
    got = settings_from(
        tmp_path,
        'downstream = ["../vllm-myplugin", "../vllm-myplugin/", "~/x"]\n'
        'downstream_web_urls = { "../vllm-myplugin" = "https://github.com/me/p/" }\n'
        'watch = ["vllm/v1/attention/**"]\nupstream_packages = ["vllm"]\n',
    )
    assert got[0] == Downstream(
        str((tmp_path / "vllm-myplugin").resolve()), "../vllm-myplugin", "https://github.com/me/p"
    )
    assert len(got) == 2, "the same directory twice is one checkout"
    assert got[1].label == "~/x" and got[1].path == str(Path("~/x").expanduser().resolve())


def test_flags_add_to_the_one_repository(tmp_path: Path) -> None:
    got = settings_from(
        tmp_path, 'downstream = ["../a"]\n', downstream=("b", "a"), watch=("csrc/**",)
    )
    assert [d.label for d in got] == ["../a", "b"], "a is ../a of the config file"
    assert got[1].path == str((tmp_path / "b").resolve()), "flags resolve against the cwd"
    s = build_settings(repos=("r",), watch=("vllm/**", "vllm/**"), now=NOW, cwd=tmp_path)
    assert s.repos[0].watch == ("vllm/**",)
    assert s.repos[0].downstream == ()


@pytest.mark.parametrize(
    ("body", "flags", "message"),
    [
        ('watch = ["/abs/**"]\n', {}, "repos.0.watch"),
        ('watch = ["vllm/../x"]\n', {}, "contains '..'"),
        ('upstream_packages = ["vllm-ascend"]\n', {}, "repos.0.upstream_packages"),
        ('downstream_web_urls = { "../p" = "javascript:alert(1)" }\ndownstream = ["../p"]\n', {},
         "repos.0.downstream_web_urls"),
        ('downstream = ["../p"]\ndownstream_web_urls = { "../q" = "https://x.org/q" }\n', {},
         "downstream_web_urls names '../q'"),
        ('downstream = [""]\n', {}, "empty downstream path"),
        ("", {"watch": ("C:\\\\x",)}, "not a relative path pattern"),
        ('[[repos]]\nsource = "../other"\n', {"downstream": ("p",)}, "exactly one --repo"),
    ],
)  # fmt: skip
def test_mistakes_are_usage_errors(
    tmp_path: Path, body: str, flags: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(".", r"\.")):
        settings_from(tmp_path, body, **flags)


def entry(impacts: tuple[DownstreamImpact, ...], watched: tuple[WatchHit, ...] = ()) -> Entry:
    who = Person("A", "a@example.com")
    commit = Commit("1" * 40, (), who, 0, 0, who, 0, 0, "Title")
    facts = Facts((), 0, 0, (), None, (), None, None, False, False, None, (), {}, (), ())
    analysis = Analysis("rules/2", ChangeType.DOCS, Importance.LOW, (Text("rule.t_none"),), "s")
    return Entry(commit, facts, analysis, impacts, watched)


def impact(kind: str, path: str, line: int) -> DownstreamImpact:
    return DownstreamImpact("../p", kind, "import_fails", "up.a.B", path, line)


def test_a_commit_that_affects_your_code_is_red_and_says_where() -> None:
    raised = raise_importance(
        entry((impact("changes", "a.py", 1), impact("breaks", "z.py", 9))), {"../p": "p"}
    )
    assert raised.analysis.importance is Importance.HIGH
    first = raised.analysis.reasons[0]
    assert (
        localise("en", first) == "affects your code: `z.py:9` in p (breaks: `up.a.B`), and 1 more"
    )
    assert localise("zh", first) == "影响你的代码：p 的 `z.py:9`（会出错：`up.a.B`），另有 1 处"
    assert raised.analysis.reasons[1:] == (Text("rule.t_none"),), "the rules' reasons stay"

    watched = raise_importance(entry((), (WatchHit("vllm/**", "vllm/a.py"),)), {})
    assert watched.analysis.importance is Importance.HIGH
    assert localise("en", watched.analysis.reasons[0]) == (
        "touches the watched path `vllm/a.py` (`vllm/**`)"
    )
