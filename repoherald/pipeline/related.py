"""Link a day's commits to the commits of other days they revert, re-land, fix or follow up.

Each reported commit is recorded in the store with the references its
message makes (:mod:`repoherald.analysis.facts.related`); then each entry gets its
links both ways: what it names that the store knows, and the known commits
that name it. A revert reported days after its commit links both entries as
soon as both days have been reported; the older day's page shows it the
next time that day is run (old archive files are never rewritten behind the
reader's back).

A reference is resolved the same way from either side, so the two entries
always agree: a SHA prefix must mean exactly one known commit, a pull request
number means its oldest known commit before the reference, and a re-land
means the newest earlier commit with the title it brings back.
"""

from __future__ import annotations

from dataclasses import replace
from zoneinfo import ZoneInfo

from repoherald.analysis.facts.related import REVERSE, mentions, title_key, title_keys_for
from repoherald.models import Entry, Mention, Related
from repoherald.render.view import local_time
from repoherald.store.base import Store
from repoherald.store.links import Indexed, Known


def link_day(store: Store, repo: str, entries: list[Entry], tz: ZoneInfo) -> list[Entry]:
    """Record ``entries`` (one repository-day) in the store, then each with its links."""
    linkable = [e for e in entries if not e.analysis.error]
    store.index_commits(
        repo,
        [
            Indexed(_known(e), title_key(e.commit.title), mentions(e.commit, e.facts))
            for e in linkable
        ],
    )
    return [e if e.analysis.error else _linked(store, repo, e, tz) for e in entries]


def _known(e: Entry) -> Known:
    return Known(e.commit.sha, e.commit.commit_time, e.facts.pr_number, e.commit.title)


def _linked(store: Store, repo: str, e: Entry, tz: ZoneInfo) -> Entry:
    me = _known(e)
    found: dict[tuple[str, str], Related] = {}
    for mention in mentions(e.commit, e.facts):
        other = resolve(store, repo, mention, me)
        if other is not None:
            found.setdefault((mention.kind, other.sha), _related(mention.kind, other, tz))
    own_key = title_key(e.commit.title)
    keys = tuple(dict.fromkeys((own_key, own_key.removeprefix("add "))))
    naming = store.mentioning(repo, me.sha, me.pr_number, keys)
    for other, mention in sorted(naming, key=lambda pair: (pair[0].time, pair[0].sha)):
        target = resolve(store, repo, mention, other)
        if target is not None and target.sha == me.sha:
            kind = REVERSE[mention.kind]
            found.setdefault((kind, other.sha), _related(kind, other, tz))
    if not found:
        return e
    return replace(e, related=tuple(found.values()))


def resolve(store: Store, repo: str, mention: Mention, by: Known) -> Known | None:
    """The one known commit ``mention`` (made by ``by``) means, or None."""
    if mention.ref == "sha":
        hits = store.commits_by_prefix(repo, mention.target)
        return hits[0] if len(hits) == 1 and hits[0].sha != by.sha else None
    if mention.ref == "pr":
        hits = store.commits_by_pr(repo, int(mention.target))
        earlier = [k for k in hits if k.sha != by.sha and k.time <= by.time]
        return earlier[0] if earlier else None
    hits = store.commits_by_title(repo, title_keys_for(mention.target))
    earlier = [k for k in hits if k.sha != by.sha and k.time <= by.time]
    return earlier[-1] if earlier else None


def _related(kind: str, other: Known, tz: ZoneInfo) -> Related:
    return Related(kind, other.sha, other.title, local_time(other.time, tz).date().isoformat())
