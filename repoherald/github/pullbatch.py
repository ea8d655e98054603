"""Pull-request context for up to 100 commits in one GraphQL query.

REST needs two requests a commit (``/commits/{sha}/pulls``, then
``/pulls/{n}`` for who merged it). GraphQL's ``Commit.associatedPullRequests``
answers the same for many commits at once, one aliased ``object(oid:)`` per
commit, with labels, body and merger in the same answer.

Each node is turned into the REST shape and goes through the same checks and
the same choice as a REST answer (:func:`~repoherald.github.parse.pick_pull`,
:func:`~repoherald.github.parse.pull_from_json`), so a hostile GraphQL answer
is refused exactly as a hostile REST one. What this module cannot answer
(an error in the answer, a malformed entry) is left out of its result, and
the caller asks REST for those commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from repoherald.github.client import GitHubClient
from repoherald.github.parse import ShapeError, git_id, number, pick_pull, pull_from_json
from repoherald.github.ref import RepoRef
from repoherald.models import PullRequest

BATCH = 100
"""Commits per query (GitHub's cost for 100 commits × 5 pull requests × 20 labels is ~11
points of 5,000 an hour)."""
PULLS_PER_COMMIT = 5
LABELS = 20

_PULL_FIELDS = f"""number title body url mergedAt baseRefName
author {{ login }} mergedBy {{ login }} mergeCommit {{ oid }}
labels(first: {LABELS}) {{ nodes {{ name }} }}"""


def graphql_url(api_url: str) -> str:
    """GitHub's GraphQL endpoint for a REST root: ``/graphql`` beside it, and
    ``https://HOST/api/graphql`` for GitHub Enterprise's ``https://HOST/api/v3``."""
    root = api_url.rstrip("/")
    if root.endswith("/api/v3"):
        return root[: -len("/v3")] + "/graphql"
    return root + "/graphql"


def query(shas: Sequence[str]) -> str:
    """One ``object(oid:)`` alias per commit (``c0``, ``c1``…); the ids are checked hex."""
    parts = [
        f'c{i}: object(oid: "{git_id(sha)}") {{ ... on Commit {{'
        f" associatedPullRequests(first: {PULLS_PER_COMMIT}) {{ nodes {{ {_PULL_FIELDS} }} }}"
        " } }"
        for i, sha in enumerate(shas)
    ]
    head = "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {"
    return "\n".join([head, *parts, "} }"])


def _login(value: Any) -> dict[str, Any] | None:
    return {"login": value["login"]} if isinstance(value, dict) and value.get("login") else None


def rest_shape(node: Any) -> dict[str, Any]:
    """A ``PullRequest`` node as ``/pulls/{n}`` would have it (only the fields we read).

    A node without a usable number is a ShapeError (its commit is then asked through
    REST), where REST's list would drop it: dropped here, the commit would look as if
    it had no pull request."""
    if not isinstance(node, dict):
        raise ShapeError("pull request node is not an object")
    labels = node.get("labels")
    names = labels.get("nodes") if isinstance(labels, dict) else None
    merge = node.get("mergeCommit")
    return {
        "number": number(node.get("number"), "pull request number"),
        "title": node.get("title"),
        "body": node.get("body"),
        "labels": [
            {"name": n["name"]} for n in names or () if isinstance(n, dict) and n.get("name")
        ],
        "user": _login(node.get("author")),
        "merged_by": _login(node.get("mergedBy")),
        "merged_at": node.get("mergedAt"),
        "merge_commit_sha": merge.get("oid") if isinstance(merge, dict) else None,
        "html_url": node.get("url"),
        "base": {"ref": node.get("baseRefName")},
    }


def _one(entry: Any, sha: str, branch: str) -> PullRequest | None:
    """The pull request of one alias's answer (None: the commit has none, or is unknown)."""
    if entry is None:
        return None  # no such commit on GitHub: as REST's 404/422
    if not isinstance(entry, dict):
        raise ShapeError("commit entry is not an object")
    pulls = entry.get("associatedPullRequests")
    nodes = pulls.get("nodes") if isinstance(pulls, dict) else None
    if not isinstance(nodes, list):
        raise ShapeError("associatedPullRequests has no node list")
    chosen = pick_pull([rest_shape(n) for n in nodes], sha, branch)
    return None if chosen is None else pull_from_json(chosen)


def read_batch(data: Any, shas: Sequence[str], branch: str) -> dict[str, PullRequest | None]:
    """The commits a GraphQL answer settles; those with a malformed entry are left out.

    An answer with ``errors`` settles none (its data may be partial, or null where
    GitHub failed rather than where a commit has no pull request).
    """
    if not isinstance(data, dict) or data.get("errors"):
        return {}
    inner = data.get("data")
    repo = inner.get("repository") if isinstance(inner, dict) else None
    if not isinstance(repo, dict):
        return {}
    out: dict[str, PullRequest | None] = {}
    for i, sha in enumerate(shas):
        key = f"c{i}"
        if key not in repo:
            continue
        try:
            out[sha] = _one(repo[key], sha, branch)
        except ShapeError:
            continue  # asked again through REST, which names what is wrong
    return out


def fetch_batch(
    client: GitHubClient, api_url: str, ref: RepoRef, shas: Sequence[str], branch: str
) -> dict[str, PullRequest | None]:
    """One GraphQL query for ``shas`` (at most :data:`BATCH`); raises GitHubError when
    GitHub refuses it."""
    body = {"query": query(shas), "variables": {"owner": ref.owner, "name": ref.name}}
    return read_batch(client.query(graphql_url(api_url), body), shas, branch)
