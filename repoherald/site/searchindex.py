"""The client-side search index: written at build time, read by ``search.js``.

No server and no ``fetch()`` (which ``file://`` forbids): every index file is
a script that hands its data to the global ``RHS`` object. A search loads
only what it needs:

* ``search/meta.js`` — repositories, types, areas, labels, shard counts;
* ``search/t-<key>.js`` — the inverted index for terms starting with one
  character (``key``: the character, or ``u`` and a hex bucket for others),
  as base-36 deltas of document numbers; a query loads one per word;
* ``search/docs-<n>.js`` — the documents (link, title, repository, day,
  importance, type, SHA, author) in blocks of :data:`BLOCK`, loaded only for
  the results shown;
* ``search/facets.js`` — importance, type, areas, labels and "affects your
  code" of every document, loaded only when a filter is set.

Documents are numbered newest first. Words are runs of letters, digits and
``_`` (lower-cased); CJK text is indexed by overlapping pairs of characters,
as ``search.js`` splits a query. Words are matched by prefix, so ``attn``
finds ``attn_backend``.
"""

from __future__ import annotations

import json
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
    """One searchable commit and the page (with anchor) it is shown on."""

    href: str
    date: str
    commit: CommitRecord


def term_key(term: str) -> str:
    """The shard a term lives in (mirrored by ``termKey`` in ``search.js``)."""
    ch = term[0]
    return ch if ("a" <= ch <= "z" or "0" <= ch <= "9") else "u" + format(ord(ch) % 64, "x")


def _b36(n: int) -> str:
    if n == 0:
        return "0"
    digits = []
    while n:
        n, r = divmod(n, 36)
        digits.append(_B36[r])
    return "".join(reversed(digits))


def _script(call: str, *args: object) -> str:
    body = ",".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in args)
    # "</" never appears raw in a script file a page might inline; escape it anyway.
    return f"RHS.{call}({body});\n".replace("</", "<\\/")


def _intern(values: Iterable[str], table: dict[str, int]) -> list[int]:
    return [table.setdefault(v, len(table)) for v in values]


def write_index(out: Path, docs: list[Doc]) -> int:
    """Write every index file under ``out/search`` (removing outdated shards); total bytes."""
    repos: dict[str, int] = {}
    types: dict[str, int] = {}
    areas: dict[str, int] = {}
    labels: dict[str, int] = {}
    postings: dict[str, list[int]] = defaultdict(list)
    blocks: list[list[list[object]]] = []
    imp, kind, area_ids, label_ids, affects = [], [], [], [], []
    for n, doc in enumerate(docs):
        c = doc.commit
        if n % BLOCK == 0:
            blocks.append([])
        blocks[-1].append(
            [
                doc.href,
                c.title,
                _intern([c.repo], repos)[0],
                doc.date,
                c.importance[0],
                _intern([c.change_type], types)[0],
                c.sha[:10],
                c.author,
            ]
        )
        imp.append(c.importance[0])
        kind.append(_intern([c.change_type], types)[0])
        area_ids.append(_intern(c.areas, areas))
        label_ids.append(_intern(c.labels, labels))
        affects.append("1" if c.affects else "0")
        for term in c.terms.split(" "):
            postings[term].append(n)
    shards: dict[str, dict[str, str]] = defaultdict(dict)
    for term, ids in postings.items():
        prev = 0
        deltas = []
        for i in ids:
            deltas.append(_b36(i - prev))
            prev = i
        shards[term_key(term)][term] = ",".join(deltas)
    files: dict[str, str] = {
        "meta.js": _script(
            "meta",
            {
                "count": len(docs),
                "block": BLOCK,
                "blocks": len(blocks),
                "terms": sorted(shards),
                "repos": list(repos),
                "types": list(types),
                "areas": list(areas),
                "labels": list(labels),
            },
        ),
        "facets.js": _script(
            "facets",
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
        files[f"docs-{i}.js"] = _script("docs", i, block)
    for key, shard in shards.items():
        files[f"t-{key}.js"] = _script("terms", key, dict(sorted(shard.items())))
    folder = out / "search"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if stale.name not in files and stale.suffix == ".js":
            stale.unlink()
    total = 0
    for name, text in files.items():
        write_page(out, f"search/{name}", text)
        total += len(text.encode("utf-8"))
    return total
