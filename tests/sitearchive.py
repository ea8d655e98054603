"""A real archive for the site's tests: a fixture repository reported by the real pipeline.

Two days of commits, the first reported in Chinese and English, with
hostile text in titles and author names (markup, ``javascript:`` links,
bidi controls), and a web URL on github.com so commit links exist.
"""

from __future__ import annotations

from pathlib import Path

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

DAY1 = "2026-08-20"
DAY2 = "2026-08-21"
BIDI = "\u202e"
HOSTILE_TITLE = f"Fix <script>alert(1)</script> in [x](javascript:alert(1)) {BIDI}evil"
HOSTILE_AUTHOR = ('Eve" onmouseover="alert(2)', "eve@example.com")
"""Git drops ``<`` and ``>`` from names; a quote that would end an attribute stays."""
WEB_URL = "https://github.com/octo/upstream"


def make_repo(path: Path) -> GitFixture:
    repo = GitFixture.init(path)
    repo.write_many({"pkg/__init__.py": "def f(x):\n    return x\n", "README.md": "hi\n"})
    repo.commit("Initial import", when=f"{DAY1}T00:30:00+00:00")
    repo.write("pkg/__init__.py", "def f(x, y):\n    return x\n")
    repo.commit(HOSTILE_TITLE, when=f"{DAY1}T01:00:00+00:00", author=HOSTILE_AUTHOR)
    repo.write("README.md", "hello\n")
    repo.commit("Add docs about attention_backend", when=f"{DAY1}T02:00:00+00:00")
    repo.write("pkg/extra.py", "def g():\n    return 1\n")
    repo.commit("Add extra helper", when=f"{DAY2}T03:00:00+00:00")
    return repo


def report(tmp: Path, repo: Path, day: str, lang: str) -> list[Path]:
    """Run the rules on ``day`` in ``lang`` into ``tmp/archive``; the files written."""
    settings = build_settings(
        day=day, tz="UTC", lang=lang, out=str(tmp / "archive"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(repo),), name="upstream", web_url=WEB_URL,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    return list(result.written)


def make_archive(tmp: Path) -> Path:
    """The archive: DAY1 in zh and en, DAY2 in zh."""
    repo = make_repo(tmp / "upstream").path
    report(tmp, repo, DAY1, "zh")
    report(tmp, repo, DAY1, "en")
    report(tmp, repo, DAY2, "zh")
    return tmp / "archive"
