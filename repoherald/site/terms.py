"""The words search finds a commit by, shared by the index writer and ``search.js``.

Words are runs of letters, digits and ``_`` (lower-cased; a ``snake_case``
word is also indexed by its parts); CJK text, which has no spaces, is
indexed by overlapping pairs of characters, as ``search.js`` splits a
query. The first twelve digits of the SHA are a word too.
"""

from __future__ import annotations

import re

CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_TOKEN = re.compile(f"[{CJK}]+|(?:(?![{CJK}])\\w)+")
_CJK_RUN = re.compile(f"[{CJK}]")


def tokens(text: str) -> set[str]:
    """The index terms of ``text`` (see the module for the rules ``search.js`` shares)."""
    out: set[str] = set()
    for run in _TOKEN.findall(text.lower()):
        if _CJK_RUN.match(run):
            out.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
        else:
            out.add(run)
            if "_" in run:
                out.update(p for p in run.split("_") if p)
    return out


def commit_terms(sha: str, *texts: str) -> str:
    """The index terms of one commit, space-separated (kept in the manifest)."""
    found = tokens(" ".join(texts))
    found.add(sha[:12].lower())
    return " ".join(sorted(found))
