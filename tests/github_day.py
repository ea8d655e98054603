"""Days of history for the GitHub tests and benchmark: every kind of change a diff can hold.

:func:`mixed_day` writes one commit of each awkward kind (Python API change,
dependency bump, executable file, rename, binary file, symlink, mode change,
deletion, empty file, a submodule pointer, a merge of a side branch whose own
commits must not be reported, non-ASCII text); :func:`busy_day` writes N
ordinary commits spread over nested packages, for the benchmark. Both return
the day they wrote, in ``TZ``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from tests.gitfixture import GitFixture

TZ = timezone(timedelta(hours=8))
TZ_NAME = "Asia/Shanghai"
DAY = date(2026, 3, 10)


def at(hour: float, day: date = DAY) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=TZ) + timedelta(hours=hour)


def baseline(fx: GitFixture) -> None:
    """The day before: a small project with code, a manifest and docs."""
    fx.write("pkg/__init__.py", "")
    fx.write("pkg/core.py", "def run(a):\n    return a\n\n\nclass Engine:\n    pass\n")
    fx.write("pkg/util/text.py", "def clean(s):\n    return s.strip()\n")
    fx.write("requirements.txt", "torch==2.1\nnumpy>=1.26\n")
    fx.write("docs/guide.md", "# Guide\n\n" + "Some words.\n" * 30)
    fx.write("scripts/build.sh", "#!/bin/sh\nmake\n")
    fx.write("assets/logo.png", bytes(range(256)) * 8)
    fx.commit("Initial import", when=at(-4))


def mixed_day(fx: GitFixture) -> date:
    """Ten first-parent commits on :data:`DAY`, plus two side-branch commits under a merge."""
    baseline(fx)
    fx.write("pkg/core.py", "def run(a, b=1):\n    return a + b\n\n\ndef extra():\n    pass\n")
    fx.commit("[Feature] run() takes b; Engine is gone (#101)", when=at(9))
    fx.write("requirements.txt", "torch==2.2\nnumpy>=1.26\n")
    fx.commit("[Build] Bump torch to 2.2", when=at(9.5))
    fx.write("bin/tool.sh", "#!/bin/sh\necho 工具\n", executable=True)
    fx.commit("Add a tool script\n\n说明：一个小工具。\n", when=at(10))
    fx.move("docs/guide.md", "docs/manual.md")
    fx.commit("docs: rename the guide", when=at(10.5))
    fx.write("assets/logo.png", bytes(reversed(range(256))) * 8)
    fx.write("assets/empty.txt", "")
    fx.commit("Refresh the logo; add a placeholder", when=at(11))
    fx.symlink("pkg/latest.py", "core.py")
    fx.chmod("scripts/build.sh", executable=True)
    fx.commit("Link latest, make build.sh executable", when=at(11.5))
    fx.checkout("side", create=True)
    fx.write("pkg/side.py", "def side():\n    return 1\n")
    fx.commit("side: first", when=at(12))
    fx.write("pkg/side.py", "def side(x=0):\n    return x\n")
    fx.commit("side: second", when=at(12.5))
    fx.checkout("main")
    fx.write("pkg/util/text.py", "def clean(s, lower=False):\n    return s.strip()\n")
    fx.commit("fix: clean() can lower-case (#102)", when=at(13))
    fx.merge("side", "Merge branch 'side' (#103)", when=at(14))
    fx.add_gitlink("third_party/lib", "a" * 40)
    fx.remove("assets/empty.txt")
    fx.commit("Vendor lib as a submodule; drop the placeholder", when=at(15))
    fx.write("pkg/big.py", "".join(f"VALUE_{i} = {i}\n" for i in range(3000)))
    fx.commit("Add a generated table (large patch)", when=at(16))
    fx.write("tail.txt", "after the day\n")
    fx.commit("The next morning", when=at(25))
    return DAY


def busy_day(fx: GitFixture, commits: int) -> date:
    """``commits`` ordinary commits on :data:`DAY`, each touching a few nested files."""
    baseline(fx)
    areas = ("engine", "attention", "kernels", "serving", "quant")
    for i in range(commits):
        area = areas[i % len(areas)]
        fx.write(
            f"pkg/{area}/mod_{i % 7}.py",
            "".join(f"def f{i}_{k}(x, y={k}):\n    return x + y\n\n" for k in range(i % 5 + 1)),
        )
        fx.write(f"tests/{area}/test_{i % 7}.py", f"def test_{i}():\n    assert True\n")
        if i % 10 == 3:
            fx.write("requirements.txt", f"torch==2.{i}\nnumpy>=1.26\n")
        if i % 10 == 7:
            fx.write(f"docs/{area}.md", f"# {area}\n\nChange {i}.\n")
        fx.commit(f"[{area}] change number {i} (#{1000 + i})", when=at(1 + 20 * i / commits))
    return DAY
