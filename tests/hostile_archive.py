"""A real archive with hostile commit text, reported by the pipeline, for the site's browser tests.

One repository, two days, reported in English and in Chinese by real runs of
the rules (no LLM). Its commits carry what a hostile upstream can put in a
commit: a ``<script>`` tag, an ``<img onerror>``, ``javascript:`` links in
Markdown and bare, and a bidi override (U+202E) that would make a title read
backwards. Everything else is ordinary, so the site has importances, change
types and areas to filter by, and words to search for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

DAYS = ("2026-03-02", "2026-03-03")
NAME = "hostile"
WEB_URL = "https://github.com/example/hostile"
SCRIPT_TITLE = "Harden parser <script>alert(1)</script>"
IMG_TITLE = 'Render <img src=x onerror="alert(2)"> badges'
BIDI_TITLE = "Rename helper \u202egnp.exe"
LINK_BODY = "See [the docs](javascript:alert(3)) and javascript:alert(4) for details."
SEARCH_WORD = "quokka"
"""A word only one commit's title carries, so a search for it has exactly one answer."""
SEARCH_TITLE = f"Add {SEARCH_WORD} scheduler for attention kernels"
HOSTILE_MARKERS = ("alert(1)", "alert(2)", "alert(3)", "alert(4)")
"""What each hostile payload would run; none of them may ever run."""


@dataclass(frozen=True)
class Archive:
    """The reports directory the pipeline wrote, and the repository it reported on."""

    reports: Path
    repo: Path


def _commits(repo: GitFixture, day: str, steps: list[tuple[str, dict[str, str]]]) -> None:
    for hour, (message, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(message, when=f"{day}T{hour:02d}:00:00+00:00")


def build(tmp: Path) -> Archive:
    """Commit the two days into a new repository under ``tmp`` and report them in both languages."""
    repo = GitFixture.init(tmp / "upstream")
    repo.write_many(
        {
            "pkg/__init__.py": "",
            "pkg/parser.py": "def parse(text):\n    return text.split()\n",
            "pkg/kernels/attention.py": "def attend(q, k, v):\n    return q\n",
            "docs/index.md": "# Docs\n",
            "requirements.txt": "numpy>=1.26\n",
        }
    )
    repo.commit("Initial import", when=f"{DAYS[0]}T00:30:00+00:00")
    _commits(
        repo,
        DAYS[0],
        [
            (
                f"{SCRIPT_TITLE}\n\n{LINK_BODY}\n",
                {"pkg/parser.py": "def parse(text):\n    return text.strip().split()\n"},
            ),
            (
                f"{IMG_TITLE} (#12)\n\nFixes the badge.\n",
                {"docs/index.md": "# Docs\n\n![badge](badge.svg)\n"},
            ),
            (f"{BIDI_TITLE}\n", {"pkg/helpers.py": "def helper():\n    return 1\n"}),
            ("Bump numpy to 2.0\n", {"requirements.txt": "numpy>=2.0\n"}),
        ],
    )
    _commits(
        repo,
        DAYS[1],
        [
            (
                f"{SEARCH_TITLE}\n",
                {"pkg/kernels/attention.py": "def attend(q, k, v, *, scale=1.0):\n    return q\n"},
            ),
            (
                "Remove parse from the public API\n",
                {"pkg/parser.py": "def _parse(text):\n    return text\n"},
            ),
            ("Fix typo in docs\n", {"docs/index.md": "# Documentation\n\n![badge](badge.svg)\n"}),
        ],
    )
    reports = tmp / "reports"
    for lang in ("en", "zh"):
        settings = build_settings(
            since=DAYS[0], until=DAYS[-1], tz="UTC", lang=lang, out=str(reports),
            home=str(tmp / "home"), cwd=tmp, no_llm=True, repos=(str(repo.path),),
            name=NAME, web_url=WEB_URL,
        )  # fmt: skip
        result = run(settings)
        assert result.ok, result.failures
    return Archive(reports, repo.path)


def sha_of(archive: Archive, title: str) -> str:
    """The SHA of the commit titled ``title``, as the English twins report it."""
    for day in DAYS:
        twin = archive.reports / day[:4] / NAME / f"{day}.en.json"
        for commit in json.loads(twin.read_text("utf-8"))["repos"][0]["commits"]:
            if commit["title"] == title:
                return str(commit["sha"])
    raise LookupError(title)
