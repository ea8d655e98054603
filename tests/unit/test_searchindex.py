"""The search index's posting lists: exact across months, and compact."""

from __future__ import annotations

import json
from pathlib import Path

from repoherald.site.records import CommitRecord
from repoherald.site.searchindex import Doc, decode, encode, term_key, write_root, write_segment


def _doc(n: int, terms: str, date: str) -> Doc:
    sha = f"{n:040x}"
    commit = CommitRecord(
        "up", sha, f"commit {n} " + "x" * 300, "eve", "high", "fix", (), (), False, "", terms
    )
    return Doc(f"2026/up/{date}.html", date, commit)


def _shard(out: Path, term: str) -> dict[str, str]:
    text = (out / f"search/t-{term_key(term)}.js").read_text(encoding="utf-8")
    found: dict[str, str] = json.loads(text[text.index("{") : text.rindex(")")])
    return found


def test_gaps_round_trip_with_no_separators() -> None:
    ids = [0, 1, 31, 32, 1055, 1056, 33_823, 33_824, 1_082_399, 1_082_400, 3_000_000]
    assert decode(encode(ids)) == ids
    assert encode([0, 1, 2, 3]) == "0111"


def test_a_term_in_several_months_lists_every_document_numbered_across_the_archive(
    tmp_path: Path,
) -> None:
    july = [_doc(n, "attn_backend fix every", "2026-07-01") for n in range(1200)]
    august = [
        _doc(2000 + n, "attn fix every" if n % 3 else "other every", "2026-08-02")
        for n in range(700)
    ]
    write_segment(tmp_path, "2026-07", july)
    write_segment(tmp_path, "2026-08", august)
    write_root(tmp_path, ["2026-08", "2026-07"])
    attn = _shard(tmp_path, "attn")
    in_august = [n for n in range(700) if n % 3]
    assert decode(attn["attn"]) == in_august
    assert decode(attn["attn_backend"]) == [700 + n for n in range(1200)]
    assert decode(_shard(tmp_path, "fix")["fix"]) == in_august + [700 + n for n in range(1200)]
    assert _shard(tmp_path, "every")["every"] == "*"  # in every document: one character
    docs = (tmp_path / "search/2026-08/docs-0.js").read_text(encoding="utf-8")
    # The title is capped; the day page has it whole.
    assert "x" * 200 not in docs and "x" * 100 in docs
