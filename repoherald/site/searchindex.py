"""The client-side search index: written at build time, read by ``search.js``.

No server and no ``fetch()`` (which ``file://`` forbids): every index file is
a script that hands its data to the global ``RHS`` object. The index is cut
into one *segment* per month, so a new day rewrites its month only;
``search/index.js`` lists the segments, newest first. In each segment
``search/<YYYY-MM>/``, a search loads only what it needs:

* ``meta.js`` — the segment's repositories, types, areas, labels and shards;
* ``t-<key>.js`` — the inverted index for terms starting with one character
  (``key``: the character, or ``u`` and a hex bucket for others), as base-36
  deltas of document numbers; a query loads one per word and segment;
* ``docs-<n>.js`` — the documents (page, title, repository, importance,
  type, SHA, author; pages, repositories, types and authors as numbers into
  ``meta.js``) in blocks of :data:`BLOCK`, loaded only for the results
  shown;
* ``facets.js`` — importance, type, areas, labels and "affects your code" of
  every document, loaded only when a filter is set.

Documents are numbered newest first within a segment. A result links to
``<day page>#c-<first 10 digits of the SHA>``, an id every commit block has.
A term found in more than half of a segment's documents lists those it is
*not* in, after a ``!``. Words are those of
:mod:`repoherald.site.terms`; they are matched by prefix, so ``attn``
finds ``attn_backend``.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from repoherald.site.pages import write_page
from repoherald.site.records import CommitRecord

BLOCK = 500
_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class Doc:
    """One searchable commit and the day page it is shown on."""

    page: str
    date: str
    commit: CommitRecord


def term_key(term: str) -> str:
    """The shard a term lives in (mirrored by ``termKey`` in ``search.js``)."""
    ch = term[0]
    return ch if ("a" <= ch <= "z" or "0" <= ch <= "9") else "u" + format(ord(ch) % 64, "x")


_SMALL: list[str] = [a + b for a in ("", *_B36[1:]) for b in _B36]
"""Base 36 of 0…1295: nearly every delta of a posting list."""


def _b36(n: int) -> str:
    if n < len(_SMALL):
        return _SMALL[n]
    digits = []
    while n:
        n, r = divmod(n, 36)
        digits.append(_B36[r])
    return "".join(reversed(digits))


def _deltas(ids: list[int]) -> str:
    """Ascending document numbers as comma-separated base-36 gaps (the first from 0)."""
    prev = 0
    out = []
    for i in ids:
        out.append(_b36(i - prev))
        prev = i
    return ",".join(out)


def _script(call: str, *args: object) -> str:
    body = ",".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in args)
    # "</" never appears raw in a script file a page might inline; escape it anyway.
    return f"RHS.{call}({body});\n".replace("</", "<\\/")


def _intern(values: Iterable[str], table: dict[str, int]) -> list[int]:
    return [table.setdefault(v, len(table)) for v in values]


def write_root(out: Path, segments: list[str]) -> None:
    """``search/index.js``: the segments, newest first; remove those no longer listed."""
    folder = out / "search"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if stale.is_dir() and stale.name not in segments:
            shutil.rmtree(stale)
    write_page(out, "search/index.js", _script("index", segments))


def write_segment(out: Path, segment: str, docs: list[Doc]) -> int:
    """Write one segment's files under ``out/search/<segment>``; their total bytes."""
    repos: dict[str, int] = {}
    types: dict[str, int] = {}
    areas: dict[str, int] = {}
    labels: dict[str, int] = {}
    pages: dict[tuple[str, str], int] = {}
    authors: dict[str, int] = {}
    postings: dict[str, list[int]] = defaultdict(list)
    blocks: list[list[list[object]]] = []
    imp, kind, area_ids, label_ids, affects = [], [], [], [], []
    for n, doc in enumerate(docs):
        c = doc.commit
        if n % BLOCK == 0:
            blocks.append([])
        blocks[-1].append(
            [
                pages.setdefault((doc.page, doc.date), len(pages)),
                c.title,
                repos.setdefault(c.repo, len(repos)),
                c.importance[0],
                types.setdefault(c.change_type, len(types)),
                c.sha[:10],
                authors.setdefault(c.author, len(authors)),
            ]
        )
        imp.append(c.importance[0])
        kind.append(types[c.change_type])
        area_ids.append(_intern(c.areas, areas))
        label_ids.append(_intern(c.labels, labels))
        affects.append("1" if c.affects else "0")
        for term in c.terms.split(" "):
            postings[term].append(n)
    shards: dict[str, dict[str, str]] = defaultdict(dict)
    count = len(docs)
    for term, ids in postings.items():
        if len(ids) * 2 > count:
            present = set(ids)
            shards[term_key(term)][term] = "!" + _deltas(
                [i for i in range(count) if i not in present]
            )
        else:
            shards[term_key(term)][term] = _deltas(ids)
    files: dict[str, str] = {
        "meta.js": _script(
            "meta",
            segment,
            {
                "count": len(docs),
                "block": BLOCK,
                "blocks": len(blocks),
                "terms": sorted(shards),
                "repos": list(repos),
                "pages": [list(p) for p in pages],
                "authors": list(authors),
                "types": list(types),
                "areas": list(areas),
                "labels": list(labels),
            },
        ),
        "facets.js": _script(
            "facets",
            segment,
            {
                "imp": "".join(imp),
                "type": kind,
                "area": area_ids,
                "label": label_ids,
                "affects": "".join(affects),
            },
        ),
    }
    for i, block in enumerate(blocks):
        files[f"docs-{i}.js"] = _script("docs", segment, i, block)
    for key, shard in shards.items():
        files[f"t-{key}.js"] = _script("terms", segment, key, dict(sorted(shard.items())))
    folder = out / "search" / segment
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if stale.name not in files and stale.suffix == ".js":
            stale.unlink()
    total = 0
    for name, text in files.items():
        write_page(out, f"search/{segment}/{name}", text)
        total += len(text.encode("utf-8"))
    return total
