"""Every specific an "Affects your code" item shows is worded in the report's language.

The matcher runs on real upstream changes and a real downstream index that
between them produce every kind of detail (removals, moves, renames, calls
that stop binding, overrides, defaults, env vars, flags, fields, and the
notes on what the upstream side cannot be sure of). Each detail must be a
neutral message whose Chinese wording carries no piece of the English one,
and the affects view must show it in the report's language.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

import pytest

from repoherald.analysis.downstream.impact import Impact, match
from repoherald.analysis.surface.change import surface_changes
from repoherald.i18n import CATALOGUES, localise
from repoherald.models import DownstreamCheck, DownstreamImpact, DownstreamProject, Text
from repoherald.render.affects import CommitRef, build_affects
from tests.unit.test_downstream_wiring import entry
from tests.unit.test_impact import downstream, upstream

DETAIL_PREFIXES = ("ds.d.", "ds.sig.", "ds.why.")

UPSTREAM = [
    upstream(
        "up/api.py",
        """
        from up.base import Base
        def load(path, strict=True, mode="r"): ...
        def shape(a, b, c=0): ...
        def swap(a, b=0): ...
        def old_name(x, y): ...
        class Runner:
            def __init__(self, config, device="cpu"): ...
            def execute(self, batch, timeout=None): ...
            def warm_up(self): ...
            def reorder(self, x, y): ...
            def drop(self, x, y): ...
        class Child(Base):
            def tick(self): ...
        """,
        """
        from up.base import Base
        def load(path, *, strict=True, mode="rb"): ...
        def shape(a, c=0, b=None): ...
        def swap(b, a=0): ...
        def new_name(x, y): ...
        class Runner:
            def __init__(self, vllm_config, device="cpu"): ...
            def execute(self, batch, intermediate, timeout=None): ...
            def reorder(self, y, x): ...
            def drop(self, x): ...
        class Child(Base):
            pass
        """,
    ),
    upstream("up/a.py", "class Engine: ...\n", None),
    upstream("up/core.py", None, "class Engine: ...\n"),
    upstream(
        "up/dyn.py",
        "from up.util import tool\n",
        "def __getattr__(name): ...\n",
    ),
    upstream(
        "up/envs.py",
        """
        import os
        environment_variables = {
            "UP_OLD": lambda: os.getenv("UP_OLD", "0"),
            "UP_PORT": lambda: int(os.getenv("UP_PORT", "80")),
        }
        """,
        """
        import os
        environment_variables = {
            "UP_PORT": lambda: int(os.getenv("UP_PORT", "8080")),
        }
        """,
    ),
    upstream("up/util.py", 'import os\nA = os.getenv("UP_ADHOC")\n', "A = 1\n"),
    upstream(
        "up/cli.py",
        """
        from dataclasses import dataclass
        def add(p):
            p.add_argument("--old-flag", default=1)
            p.add_argument("--block", dest="block_size", default=16)
        @dataclass
        class Cfg:
            size: int = 1
            legacy: str = "x"
            old_style: bool = False
        """,
        """
        from dataclasses import dataclass
        def add(p):
            p.add_argument("--block-size", dest="block_size", default=16)
        @dataclass
        class Cfg:
            size: int = 2
            new_style: bool = False
        """,
    ),
]

DOWNSTREAM = {
    "plug__calls": """
        from up.api import load, shape, swap, Runner, old_name
        load("p", False)
        load("p", strict=False)
        shape(1, 2)
        swap(1, b=2)
        Runner(config=1)
        try:
            load("p", False)
        except TypeError:
            pass
        runner = Runner(1)
        runner.warm_up()
        """,
    "plug__names": """
        try:
            from up.a import Engine
        except ImportError:
            Engine = None
        from up.core import Engine as E2
        from up.dyn import tool
        from up.api import Child
        Child().tick()
        """,
    "plug__runner": """
        from up.api import Runner
        class MyRunner(Runner):
            def execute(self, batch, timeout=None):
                return batch
            def warm_up(self):
                pass
            def reorder(self, x, y):
                pass
            def drop(self, x, y):
                pass
        """,
    "plug__cfg": """
        import os
        from up import envs
        from up.cli import Cfg
        os.environ["UP_OLD"] = "1"
        os.environ.setdefault("UP_PORT", "81")
        os.environ["UP_ADHOC"] = "1"
        envs.UP_OLD
        cmd = ["up", "serve", "--old-flag", "2", "--block", "8"]
        Cfg(legacy="y", old_style=True)
        """,
}


@pytest.fixture(scope="module")
def impacts() -> list[Impact]:
    return match(surface_changes(UPSTREAM), downstream(**DOWNSTREAM))


def codes(message: object) -> Iterator[str]:
    """Every catalogue key a message uses, nested ones included."""
    if isinstance(message, Text):
        yield message.code
        for value in message.args.values():
            for item in value if isinstance(value, tuple) else (value,):
                yield from codes(item)


def english_fragments() -> set[str]:
    """The words of every English detail template, without its placeholders."""
    out: set[str] = set()
    for key, template in CATALOGUES["en"].items():
        if key.startswith(DETAIL_PREFIXES):
            for literal, _, _, _ in string.Formatter().parse(template):
                literal = re.sub(r"\S*_\S*", " ", literal)  # code (``__getattr__``) stays
                out.update(m.strip() for m in re.findall(r"[A-Za-z][A-Za-z ,'.]{3,}", literal))
    out.discard("")
    return out


def assert_no_english(text: str) -> None:
    found = sorted(f for f in english_fragments() if f in text)
    assert found == [], f"English in a Chinese detail: {text!r}"


def test_the_scenarios_use_every_detail_wording(impacts: list[Impact]) -> None:
    used = {code for i in impacts for code in codes(i.detail)}
    wanted = {k for k in CATALOGUES["en"] if k.startswith(DETAIL_PREFIXES)}
    assert wanted - used == set(), "a detail wording no scenario produces"


def test_chinese_details_carry_no_english_and_english_reads_as_before(
    impacts: list[Impact],
) -> None:
    by_line = {(i.path, i.line, i.reason_code, i.upstream): i.detail for i in impacts}
    for detail in by_line.values():
        assert isinstance(detail, Text)
        assert_no_english(localise("zh", detail))
        assert not re.search(r"[\u4e00-\u9fff]", localise("en", detail))
    guarded = by_line[("plug/calls.py", 9, "guarded", "up.api.load")]
    assert localise("en", guarded) == (
        "2 positional arguments, at most 1 accepted (up.api.load(path, *, strict=True, mode='rb'))"
        "; the handler runs now"
    )
    assert localise("zh", guarded) == (
        "传入 2 个位置参数，最多只接受 1 个（up.api.load(path, *, strict=True, mode='rb')）"
        "；现在会走异常处理分支"
    )
    unsure = by_line[("plug/names.py", 7, "maybe_import_fails", "up.dyn.tool")]
    assert localise("en", unsure) == (
        "up.dyn.tool was removed (was imported from up.util; "
        "the module defines __getattr__ and may still provide it)"
    )
    assert localise("zh", unsure) == (
        "up.dyn.tool 已被删除（原本从 up.util 导入；该模块定义了 __getattr__，可能仍会提供它）"
    )
    fallback = by_line[("plug/names.py", 3, "guarded", "up.a.Engine")]
    assert localise("zh", fallback) == "up.a.Engine 已移到 up.core.Engine；现在会走后备路径"
    field = by_line[("plug/cfg.py", 10, "field_removed", "up.cli.Cfg.legacy")]
    assert localise("en", field) == "passes legacy=, a field up.cli.Cfg no longer has"
    assert localise("zh", field) == "传入了 legacy=，但 up.cli.Cfg 已没有这个字段"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_affects_view_words_details_in_the_report_language(
    impacts: list[Impact], lang: str
) -> None:
    records = tuple(
        DownstreamImpact("plugin", i.kind, i.reason_code, i.upstream, i.path, i.line,
                         i.detail, i.replacement, i.upstream_path, i.upstream_line)
        for i in impacts
    )  # fmt: skip
    one = entry(records)
    ref = CommitRef(one.commit.sha, one.commit.sha[:7], "t", "a")
    check = DownstreamCheck((DownstreamProject("plugin", "plugin"),), (), ("up",))
    view = build_affects(check, [one], [ref], lang, "affects")
    (project,) = view.projects
    assert len(project.impacts) == len(impacts)
    for item in project.impacts:
        assert item.detail == localise(lang, item.detail_message)
        if lang == "zh":
            assert_no_english(item.text)
            assert_no_english(item.detail)
    shown = {(i.path, i.line, i.code): i for i in project.impacts}
    call = shown[("plug/calls.py", 7, "call_fails")]
    if lang == "zh":
        assert "缺少必需参数 vllm_config" in call.text and "不接受关键字参数 config" in call.text
        assert call.text.endswith("）")
    else:
        assert call.text == (
            "call fails: `up.api.Runner.__init__` (unexpected keyword argument config; "
            "missing required argument vllm_config (up.api.Runner.__init__(self, vllm_config, "
            "device='cpu')))"
        )
    renamed = shown[("plug/calls.py", 2, "import_fails")]
    assert renamed.detail == localise(lang, renamed.detail_message) != ""
    assert renamed.detail not in renamed.text, "a detail that only restates the item is left out"
    item = {
        "zh": "导入会失败：`up.api.old_name` → `up.api.new_name`",
        "en": "import fails: `up.api.old_name` → `up.api.new_name`",
    }
    assert renamed.text == item[lang]
    unsure = shown[("plug/cfg.py", 7, "env_read_removed")]
    expected = {
        "zh": "环境变量可能不再被读取：`UP_ADHOC`"
        "（UP_ADHOC 已不再被读取（另一个未改动的文件可能仍会读取它））",
        "en": "the environment variable may no longer be read: `UP_ADHOC`"
        " (UP_ADHOC is no longer read (another, unchanged file may still read it))",
    }
    assert unsure.text == expected[lang]
