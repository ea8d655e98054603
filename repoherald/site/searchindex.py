"""The client-side search index: written at build time, read by ``search.js``.

No server and no ``fetch()`` (which ``file://`` forbids): every index file is
a script that hands its data to the global ``RHS`` object. A first search
must load few files (each costs a round trip; 26 to 100 of them made a first
search 200 ms), and a new day must not rewrite the archive's documents, so:

* the *documents* stay in one segment per month, ``search/<YYYY-MM>/``,
  rewritten only when the month changes: ``docs-<n>.js``, one string a
  document, ``"<page> <repository> <importance> <type> <SHA> <author>
  <title>"`` (pages, repositories, types and authors as numbers into the
  month's tables; the title capped at :data:`TITLE`), in
  blocks of :data:`BLOCK`, loaded only for the results shown, and
  ``facets.js`` (importance, type, areas, labels, "affects your code"),
  loaded only when a filter is set;
* the *terms* are one dictionary for the whole archive, cut by the first two
  characters of a term (:func:`term_key`) into ``search/t-<key>.js``: a
  one-word search loads ``search/index.js``, one term shard and the
  document blocks of the results it shows;
* ``search/index.js`` lists the months, newest first, with each one's first
  document number and tables, and the term shards.

Documents are numbered across the archive, newest month first. A posting
list is ascending document numbers as gaps (the first from 0), each written
in base 32 with :data:`_MORE` digits before the last :data:`_LAST` digit, so
it needs no separators; ``*`` lists every document. Each month's postings are kept beside the record
store (:func:`_cache`), so a build joins them into the archive's shards
without reading a record of an unchanged month.

A result links to ``<day page>#c-<first 10 digits of the SHA>``, an id every
commit block has. Words are those of :mod:`repoherald.site.terms`; they are
matched by prefix, so ``attn`` finds ``attn_backend``.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repoherald.site.pages import write_page
from repoherald.site.records import CommitRecord
from repoherald.site.recordstore import STORE

BLOCK = 500
TITLE = 120
"""Characters of a title the index keeps (the day page has it whole)."""
_LAST = "0123456789abcdefghijklmnopqrstuv"
_MORE = "wxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"
_LAST_VALUE = {ch: i for i, ch in enumerate(_LAST)}
_MORE_VALUE = {ch: i for i, ch in enumerate(_MORE)}


class KeptDamaged(Exception):
    """A month's kept postings cannot be read: its segment must be written again."""

    def __init__(self, segment: str) -> None:
        super().__init__(segment)
        self.segment = segment


@dataclass(frozen=True, slots=True)
class Doc:
    """One searchable commit and the day page it is shown on."""

    page: str
    date: str
    commit: CommitRecord


def _ascii(ch: str) -> bool:
    return "a" <= ch <= "z" or "0" <= ch <= "9"


def term_key(term: str) -> str:
    """The shard a term lives in (mirrored by ``termKey`` in ``search.js``).

    Its first two characters when the first is a letter or digit of ASCII
    (``-`` for a second one that is not, or none), so every term a prefix
    of two characters or more matches is in one shard; ``_`` and a hex
    bucket of the first character otherwise.
    """
    ch = term[0]
    if not _ascii(ch):
        return "_" + format(ord(ch) % 64, "x")
    return ch + (term[1] if len(term) > 1 and _ascii(term[1]) else "-")


_SMALL: list[str] = [(_MORE[n // 32] if n >= 32 else "") + _LAST[n % 32] for n in range(1024)]
"""The code of 0…1023: nearly every gap of a posting list."""
_PAIR: list[str] = [_MORE[n // 32] + _LAST[n % 32] for n in range(1024)]
"""The last two digits of a larger number (a leading zero digit written)."""


def _gap(n: int) -> str:
    # Unrolled for up to four digits: joining a year's postings calls this 200,000 times.
    if n < 1024:
        return _SMALL[n]
    if n < 32768:
        return _MORE[n >> 10] + _PAIR[n & 1023]
    if n < 1048576:
        return _MORE[n >> 15] + _MORE[(n >> 10) & 31] + _PAIR[n & 1023]
    digits = [_LAST[n % 32]]
    n //= 32
    while n:
        n, r = divmod(n, 32)
        digits.append(_MORE[r])
    return "".join(reversed(digits))


def encode(ids: Iterable[int]) -> str:
    """Ascending document numbers as their gaps (the first from 0)."""
    prev = 0
    out = []
    for i in ids:
        out.append(_gap(i - prev))
        prev = i
    return "".join(out)


def decode(text: str) -> list[int]:
    """The document numbers :func:`encode` wrote (mirrored by ``decode`` in ``search.js``)."""
    ids: list[int] = []
    n = last = 0
    for ch in text:
        if ch in _MORE_VALUE:
            n = n * 32 + _MORE_VALUE[ch]
        else:
            last += n * 32 + _LAST_VALUE[ch]
            ids.append(last)
            n = 0
    return ids


def _first_gap(text: str) -> tuple[int, int]:
    """The first gap of a posting list and how many characters it takes."""
    n = 0
    for k, ch in enumerate(text):
        if ch in _MORE_VALUE:
            n = n * 32 + _MORE_VALUE[ch]
        else:
            return n * 32 + _LAST_VALUE[ch], k + 1
    raise ValueError("a posting list ends inside a number")


def _script(call: str, *args: object) -> str:
    body = ",".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in args)
    # "</" never appears raw in a script file a page might inline; escape it anyway.
    return f"RHS.{call}({body});\n".replace("</", "<\\/")


def _intern(values: Iterable[str], table: dict[str, int]) -> list[int]:
    return [table.setdefault(v, len(table)) for v in values]


def _cache(out: Path, segment: str) -> Path:
    """Where a month's tables and postings are kept for :func:`write_root`."""
    return out / STORE / "search" / f"{segment}.json"


def is_written(out: Path, segment: str) -> bool:
    """Whether a month's documents and kept postings are both there (a site built before
    the postings were kept has only the former)."""
    return (out / "search" / segment).is_dir() and _cache(out, segment).is_file()


def _short(title: str) -> str:
    return title if len(title) <= TITLE else title[: TITLE - 1].rstrip() + "…"


def write_segment(out: Path, segment: str, docs: list[Doc]) -> int:
    """Write one month's documents under ``out/search/<segment>`` and keep its postings
    for :func:`write_root`; the bytes of the files the site serves."""
    repos: dict[str, int] = {}
    types: dict[str, int] = {}
    areas: dict[str, int] = {}
    labels: dict[str, int] = {}
    pages: dict[tuple[str, str], int] = {}
    authors: dict[str, int] = {}
    postings: dict[str, list[int]] = defaultdict(list)
    blocks: list[list[str]] = []
    imp: list[str] = []
    kind: list[int] = []
    area_ids: list[list[int]] = []
    label_ids: list[list[int]] = []
    affects: list[str] = []
    for n, doc in enumerate(docs):
        c = doc.commit
        if n % BLOCK == 0:
            blocks.append([])
        page = pages.setdefault((doc.page, doc.date), len(pages))
        repo = repos.setdefault(c.repo, len(repos))
        kind_id = types.setdefault(c.change_type, len(types))
        author = authors.setdefault(c.author, len(authors))
        # One string a document: the title last, so its spaces need no escaping.
        blocks[-1].append(
            f"{page} {repo} {c.importance[0]} {kind_id} {c.sha[:10]} {author} {_short(c.title)}"
        )
        imp.append(c.importance[0])
        kind.append(types[c.change_type])
        area_ids.append(_intern(c.areas, areas))
        label_ids.append(_intern(c.labels, labels))
        affects.append("1" if c.affects else "0")
        for term in c.terms.split(" "):
            postings[term].append(n)
    files: dict[str, str] = {
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
    folder = out / "search" / segment
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if stale.name not in files and stale.suffix == ".js":
            stale.unlink()
    total = 0
    for name, text in files.items():
        write_page(out, f"search/{segment}/{name}", text)
        total += len(text.encode("utf-8"))
    meta = {
        "count": len(docs),
        "repos": list(repos),
        "pages": [list(p) for p in pages],
        "authors": list(authors),
        "types": list(types),
        "areas": list(areas),
        "labels": list(labels),
    }
    kept = {term: [encode(ids), ids[-1], len(ids)] for term, ids in postings.items()}
    cache = _cache(out, segment)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.name + ".tmp")
    text = json.dumps({"meta": meta, "post": kept}, ensure_ascii=False, separators=(",", ":"))
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(cache)
    return total


def write_root(out: Path, segments: list[str]) -> int:
    """``search/index.js`` and the archive's term shards from the months' kept postings
    (``segments`` newest first); remove months and shards no longer there. Their bytes.

    Raises :class:`KeptDamaged` for a month whose kept postings cannot be read (a
    file cut short by a crash): the caller writes that month again and retries."""
    folder = out / "search"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if stale.is_dir() and stale.name not in segments:
            shutil.rmtree(stale)
    for stale in (out / STORE / "search").glob("*.json"):
        if stale.stem not in segments:
            stale.unlink()
    months: list[dict[str, Any]] = []
    lists: dict[str, list[str]] = defaultdict(list)
    ends: dict[str, int] = {}
    counts: dict[str, int] = defaultdict(int)
    offset = 0
    for segment in segments:
        try:
            kept = json.loads(_cache(out, segment).read_text(encoding="utf-8"))
            meta = kept["meta"]
            post = [
                (term, str(text), int(last), int(count))
                for term, (text, last, count) in kept["post"].items()
            ]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise KeptDamaged(segment) from exc
        months.append({"id": segment, "first": offset, "block": BLOCK, **meta})
        for term, text, last, count in post:
            gap, width = _first_gap(text)
            lists[term].append(_gap(offset + gap - ends.get(term, 0)) + text[width:])
            ends[term] = offset + last
            counts[term] += count
        offset += meta["count"]
    shards: dict[str, dict[str, str]] = defaultdict(dict)
    for term in sorted(lists):
        # A word every commit has finds them all: "*" says so in one character.
        every = counts[term] == offset
        shards[term_key(term)][term] = "*" if every else "".join(lists[term])
    files = {f"t-{key}.js": _script("terms", key, shard) for key, shard in shards.items()}
    files["index.js"] = _script("index", {"months": months, "terms": sorted(shards)})
    for stale in folder.glob("t-*.js"):
        if stale.name not in files:
            stale.unlink()
    total = 0
    for name, text in files.items():
        write_page(out, f"search/{name}", text)
        total += len(text.encode("utf-8"))
    return total
