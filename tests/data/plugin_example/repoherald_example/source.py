"""``source = "example:commits.json"``: a repository's history written down as JSON.

The file holds ``{"name": ..., "commits": [...]}``, newest commit first; each
commit has ``sha``, ``time`` (seconds since the epoch), ``author``,
``email``, ``message``, ``patch`` and ``files`` (``path``, ``status`` such
as ``added`` or ``modified``, ``added``, ``deleted``). Each commit's parent
is the one after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from repoherald import SourceContext, SourceError, SourceInfo, SourceOptions
from repoherald.config.repos import RepoConfig
from repoherald.models import Commit, CommitPatch, FileChange, FileStatus, Person, PullRequest
from repoherald.sources.unidiff import split_patch


class ExampleSource:
    """Every answer the report needs, read from the JSON file once."""

    def __init__(self, path: Path, data: dict[str, Any], cfg: RepoConfig) -> None:
        self._commits: list[dict[str, Any]] = list(data["commits"])
        self._by_sha = {c["sha"]: i for i, c in enumerate(self._commits)}
        self.info = SourceInfo(
            name=cfg.name or str(data.get("name") or path.stem),
            identity=f"example:{path.resolve()}",
            branch=cfg.branch or "main",
            web_url=cfg.web_url,
        )

    def __enter__(self) -> ExampleSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def history(self) -> list[tuple[str, int]]:
        return [(c["sha"], int(c["time"])) for c in self._commits]

    def prepare(self, shas: Iterable[str]) -> None:
        return None

    def read_commits(self, shas: Iterable[str]) -> dict[str, Commit]:
        out = {}
        for sha in shas:
            i = self._by_sha[sha]
            c = self._commits[i]
            parents = (self._commits[i + 1]["sha"],) if i + 1 < len(self._commits) else ()
            who = Person(c["author"], c["email"])
            t = int(c["time"])
            out[sha] = Commit(sha, parents, who, t, 0, who, t, 0, c["message"])
        return out

    def missing_parents(self, shas: Iterable[str]) -> set[str]:
        return set()

    def file_changes(self, commits: Iterable[Commit]) -> dict[str, list[FileChange]]:
        return {
            commit.sha: [
                FileChange(f["path"], FileStatus(f["status"]), None, f["added"], f["deleted"])
                for f in self._commits[self._by_sha[commit.sha]]["files"]
            ]
            for commit in commits
        }

    def read_blob(self, oid: str, max_bytes: int) -> bytes | None:
        return None  # no file contents: the Python API facts are left out

    def patches(self, commit: Commit) -> CommitPatch:
        text = str(self._commits[self._by_sha[commit.sha]].get("patch", ""))
        return CommitPatch(tuple(split_patch(text, self.file_changes([commit])[commit.sha])))

    def pull_request(self, sha: str) -> PullRequest | None:
        return None

    def close(self) -> None:
        return None


class ExampleBackend:
    """The ``example`` scheme (entry point ``example`` in group ``repoherald.sources``)."""

    scheme: ClassVar[str] = "example"
    Options: ClassVar[type[SourceOptions]] = SourceOptions

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def open(self, cfg: RepoConfig, ctx: SourceContext) -> ExampleSource:
        path = Path(cfg.source.removeprefix("example:"))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SourceError(f"{cfg.source}: cannot read {path}: {exc}: fix the file") from None
        return ExampleSource(path, data, cfg)

    def guess_name(self, cfg: RepoConfig) -> str:
        """The same name :meth:`open` gives, when the file can be read (``run`` files by it)."""
        path = Path(cfg.source.removeprefix("example:"))
        try:
            name = json.loads(path.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            name = None
        return cfg.name or str(name or path.stem or cfg.source)
