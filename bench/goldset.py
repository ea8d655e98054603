"""The labelled gold set and the raw inputs the rules need for each of its commits.

The gold labels live in ``bench/gold/commits.tsv``. To score the rules, each
commit's metadata, its first-parent file changes and the blobs that facts
extraction reads are needed. They come from the bare mirrors in
``/work/.mirror/<owner>+<name>/repo`` when those exist, and otherwise from
``bench/gold/inputs.jsonl.xz``, a small committed cache of exactly those
inputs (CI has no mirrors).

The cache stores raw inputs, not computed facts, on purpose: new facts for
better rules must be computable from it without the mirrors. Besides every
blob the current :class:`~repoherald.analysis.facts.commit.FactsExtractor` reads, it
keeps the before/after text of every changed ``.py``/``.pyi`` file under
:data:`PY_BLOB_LIMIT` and every changed text file under
:data:`SMALL_BLOB_LIMIT` (version pins, manifests, workflow files). E-mail
addresses are replaced in messages and dropped from identities: the cache is
committed and addresses have no business in it.
"""

from __future__ import annotations

import base64
import csv
import json
import lzma
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from repoherald.analysis.facts.commit import AreaRules, FactsExtractor, package_names_for
from repoherald.analysis.facts.hostpins import host_names_for
from repoherald.models import Commit, FileChange, FileStatus, Person
from repoherald.pipeline.analyse import MAX_BLOB_BYTES
from repoherald.sources.git.repo import GitRepo, open_local

GOLD_DIR = Path(__file__).parent / "gold"
COMMITS_TSV = GOLD_DIR / "commits.tsv"
CACHE_PATH = GOLD_DIR / "inputs.jsonl.xz"
HOLDOUT_DIR = Path(__file__).parent / "holdout"
SETS = {
    "gold": GOLD_DIR,
    "holdout": HOLDOUT_DIR,
    "holdout2": HOLDOUT_DIR.with_name("holdout2"),
    "holdout3": HOLDOUT_DIR.with_name("holdout3"),
    "holdout4": HOLDOUT_DIR.with_name("holdout4"),
    "holdout5": HOLDOUT_DIR.with_name("holdout5"),
    "holdout6": HOLDOUT_DIR.with_name("holdout6"),
}
"""Labelled sets by name: ``gold`` is what the rules were developed on; ``holdout``
holds repositories labelled after the rules were written, to see how they carry over."""
DEFAULT_MIRRORS = Path("/work/.mirror")

CACHE_VERSION = 1
PY_BLOB_LIMIT = 200_000
"""Python blobs of changed files up to this size are kept for future facts."""
SMALL_BLOB_LIMIT = 16_000
"""Any other text blob of a changed file up to this size is kept too."""

LABELS = ("high", "medium", "low")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_EMAIL_STANDIN = "email@removed.invalid"


@dataclass(frozen=True)
class GoldCommit:
    """One reconciled row of ``commits.tsv``."""

    repo: str
    sha: str
    committed: str
    title: str
    type: str
    importance: str
    note: str


@dataclass(frozen=True)
class CommitInputs:
    """What facts extraction needs for one commit, besides blob contents."""

    repo: str
    commit: Commit
    files: tuple[FileChange, ...]


def load_gold(path: Path = COMMITS_TSV) -> list[GoldCommit]:
    """The reconciled gold rows, in file order."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [GoldCommit(**row) for row in rows]


def mirror_dir(mirrors: Path, repo: str) -> Path:
    """``owner/name`` -> ``<mirrors>/owner+name/repo``, the layout of the fetched mirrors."""
    return mirrors / repo.replace("/", "+") / "repo"


def mirrors_present(mirrors: Path, repos: Iterable[str]) -> bool:
    """True when every repository of the set has a mirror under ``mirrors``."""
    return all((mirror_dir(mirrors, r) / "objects").is_dir() for r in repos)


def extractor_for(repo: str, read_blob: Callable[[str], bytes | None]) -> FactsExtractor:
    """The facts extractor the pipeline would build for ``repo`` with no configured areas."""
    return FactsExtractor(
        AreaRules(package_names=package_names_for(repo)), read_blob, hosts=host_names_for(repo)
    )


# -- reading from mirrors ----------------------------------------------------


def read_mirror(git: GitRepo, repo: str, shas: list[str]) -> list[CommitInputs]:
    """Commits and first-parent file changes of ``shas``, read as the pipeline reads them."""
    commits = git.read_commits(shas)
    diffs = git.diff_first_parent(commits[s] for s in shas)
    binary = [f.new_blob or f.old_blob for s in shas for f in diffs[s] if f.binary]
    sizes = git.blob_sizes(binary)
    out = []
    for sha in shas:
        files = tuple(
            replace(f, size=sizes.get(f.new_blob or f.old_blob)) if f.binary else f
            for f in diffs[sha]
        )
        out.append(CommitInputs(repo, commits[sha], files))
    return out


def open_mirror(mirrors: Path, repo: str) -> GitRepo:
    """Open the bare mirror of ``repo`` (``open_local`` reports a missing one)."""
    return open_local(str(mirror_dir(mirrors, repo)))


# -- the cache -----------------------------------------------------------------


def scrub(text: str) -> str:
    """Replace e-mail addresses so none is committed with the cache."""
    return _EMAIL.sub(_EMAIL_STANDIN, text)


def _commit_to_json(c: Commit) -> dict[str, Any]:
    return {
        "sha": c.sha,
        "parents": list(c.parents),
        "author": c.author.name,
        "author_time": c.author_time,
        "author_offset": c.author_offset,
        "committer": c.committer.name,
        "commit_time": c.commit_time,
        "commit_offset": c.commit_offset,
        "message": scrub(c.message),
        "encoding": c.encoding,
        "decode_errors": c.decode_errors,
    }


def _commit_from_json(d: dict[str, Any]) -> Commit:
    return Commit(
        sha=d["sha"],
        parents=tuple(d["parents"]),
        author=Person(d["author"], ""),
        author_time=d["author_time"],
        author_offset=d["author_offset"],
        committer=Person(d["committer"], ""),
        commit_time=d["commit_time"],
        commit_offset=d["commit_offset"],
        message=d["message"],
        encoding=d["encoding"],
        decode_errors=d["decode_errors"],
    )


def _file_to_json(f: FileChange) -> dict[str, Any]:
    return {
        "path": f.path,
        "status": f.status.value,
        "old_path": f.old_path,
        "added": f.added,
        "deleted": f.deleted,
        "binary": f.binary,
        "old_mode": f.old_mode,
        "new_mode": f.new_mode,
        "old_blob": f.old_blob,
        "new_blob": f.new_blob,
        "size": f.size,
    }


def _file_from_json(d: dict[str, Any]) -> FileChange:
    return FileChange(**{**d, "status": FileStatus(d["status"])})


def _blob_to_json(oid: str, data: bytes) -> dict[str, Any]:
    try:
        return {"blob": oid, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"blob": oid, "base64": base64.b64encode(data).decode("ascii")}


def wanted_blobs(files: Iterable[FileChange]) -> Iterator[tuple[str, int]]:
    """(oid, size limit) of the blobs of changed files worth keeping for future facts."""
    for f in files:
        if f.binary or f.is_submodule:
            continue
        limit = PY_BLOB_LIMIT if f.path.endswith((".py", ".pyi")) else SMALL_BLOB_LIMIT
        for oid in (f.old_blob, f.new_blob):
            if oid:
                yield oid, limit


def write_cache(path: Path, inputs: list[CommitInputs], blobs: dict[str, bytes]) -> None:
    """Write the commits and blobs as xz-compressed JSON lines, in a stable order."""
    # xz rather than gzip: successive versions of one large file (a 400 KB
    # model runner touched by many commits) share most of their text, and
    # only xz's large window finds that; the cache is 3x smaller.
    with lzma.open(path, "wt", encoding="utf-8", preset=9, newline="\n") as fh:
        fh.write(json.dumps({"version": CACHE_VERSION, "commits": len(inputs)}) + "\n")
        for item in inputs:
            record = {
                "repo": item.repo,
                "commit": _commit_to_json(item.commit),
                "files": [_file_to_json(f) for f in item.files],
            }
            fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        for oid in sorted(blobs):
            fh.write(json.dumps(_blob_to_json(oid, blobs[oid]), ensure_ascii=False) + "\n")


def load_cache(path: Path = CACHE_PATH) -> tuple[list[CommitInputs], dict[str, bytes]]:
    """The commits and blobs written by :func:`write_cache`."""
    inputs: list[CommitInputs] = []
    blobs: dict[str, bytes] = {}
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        header = json.loads(fh.readline())
        if header.get("version") != CACHE_VERSION:
            raise SystemExit(f"{path} has cache version {header.get('version')}: regenerate it")
        for line in fh:
            record = json.loads(line)
            if "blob" in record:
                if "text" in record:
                    blobs[record["blob"]] = record["text"].encode("utf-8")
                else:
                    blobs[record["blob"]] = base64.b64decode(record["base64"])
                continue
            inputs.append(
                CommitInputs(
                    record["repo"],
                    _commit_from_json(record["commit"]),
                    tuple(_file_from_json(f) for f in record["files"]),
                )
            )
    return inputs, blobs


def collect_from_mirrors(
    mirrors: Path, gold: list[GoldCommit]
) -> tuple[list[CommitInputs], dict[str, bytes]]:
    """Read every gold commit from the mirrors, with the blobs the cache should keep.

    The blobs facts extraction actually reads are recorded by running it
    once through a recording reader, so the cache serves the current
    extractor exactly, whatever it reads.
    """
    inputs: list[CommitInputs] = []
    blobs: dict[str, bytes] = {}
    by_repo: dict[str, list[str]] = {}
    for row in gold:
        by_repo.setdefault(row.repo, []).append(row.sha)
    for repo, shas in by_repo.items():
        with open_mirror(mirrors, repo) as git:
            items = read_mirror(git, repo, shas)

            def recording(oid: str, git: GitRepo = git) -> bytes | None:
                data = git.read_blob(oid, MAX_BLOB_BYTES)
                if data is not None:
                    blobs[oid] = data
                return data

            extractor = extractor_for(repo, recording)
            for item in items:
                extractor.extract(item.commit, item.files)
                for oid, limit in wanted_blobs(item.files):
                    if oid not in blobs:
                        data = git.read_blob(oid, limit)
                        if data is not None and (limit == PY_BLOB_LIMIT or b"\0" not in data):
                            blobs[oid] = data
            inputs.extend(items)
    order = {(row.repo, row.sha): i for i, row in enumerate(gold)}
    inputs.sort(key=lambda it: order[(it.repo, it.commit.sha)])
    return inputs, blobs
