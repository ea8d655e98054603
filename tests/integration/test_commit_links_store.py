"""The store's commit index on both backends: lookups stay inside one repository, an
ambiguous prefix finds two (so links nothing), and a re-index replaces mentions."""

from __future__ import annotations

from repoherald.models import Mention
from repoherald.store.links import Indexed, Known
from tests.storefixture import StoreAt

A = "abcdef1" + "0" * 33
B = "abcdef1" + "1" * 33
C = "1234567" + "2" * 33


def _row(sha: str, time: int, pr: int | None, title: str, *mentions: Mention) -> Indexed:
    return Indexed(Known(sha, time, pr, title), title.casefold(), tuple(mentions))


def test_lookups_stay_in_their_repository(store_at: StoreAt) -> None:
    with store_at.open() as store:
        store.index_commits("widget", [_row(A, 10, 101, "Add MoE")])
        store.index_commits("gadget", [_row(C, 20, 7, "Fix", Mention("fixes", "sha", A[:7]))])
        assert store.commits_by_prefix("widget", A[:7]) == [Known(A, 10, 101, "Add MoE")]
        assert store.commits_by_prefix("gadget", A[:7]) == []
        assert store.commits_by_pr("gadget", 101) == []
        assert store.mentioning("widget", A, 101, ("add moe",)) == []
        assert store.mentioning("gadget", A, None, ()) != [], "gadget's own mention of the prefix"


def test_an_ambiguous_or_short_prefix_is_not_one_commit(store_at: StoreAt) -> None:
    with store_at.open() as store:
        store.index_commits("widget", [_row(A, 10, None, "one"), _row(B, 11, None, "two")])
        assert len(store.commits_by_prefix("widget", "abcdef1")) == 2
        assert [k.sha for k in store.commits_by_prefix("widget", B[:8])] == [B]
        assert store.commits_by_prefix("widget", "abcdef") == [], "fewer than 7 digits"
        assert store.commits_by_prefix("widget", "abcdef1%") == [], "not a SHA"


def test_reindexing_replaces_a_commits_mentions(store_at: StoreAt) -> None:
    with store_at.open() as store:
        store.index_commits("widget", [_row(A, 10, 101, "Add MoE")])
        store.index_commits("widget", [_row(C, 20, None, "Fix", Mention("fixes", "pr", "101"))])
        assert [k.sha for k, _ in store.mentioning("widget", A, 101, ())] == [C]
        store.index_commits("widget", [_row(C, 20, None, "Fix")])
        assert store.mentioning("widget", A, 101, ()) == []
    with store_at.open() as store:
        assert store.commits_by_title("widget", ["add moe"]) == [Known(A, 10, 101, "Add MoE")]
