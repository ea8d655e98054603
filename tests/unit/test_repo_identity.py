"""A repository's identity is resolved once, from its configuration, without opening it."""

from __future__ import annotations

from repoherald.config.repos import RepoConfig
from repoherald.pipeline.identity import identify
from repoherald.pipeline.service import select_repos


def test_a_named_clone_url_is_filed_and_shown_by_its_name_but_keeps_its_own() -> None:
    repo = identify(RepoConfig(source="https://github.com/acme/vllm-spyre.git", name="spyre"))
    assert (repo.key, repo.name, repo.own_name) == ("spyre", "spyre", "vllm-spyre")
    assert repo.names == ("spyre",)


def test_a_github_source_is_shown_as_owner_name_and_filed_under_name() -> None:
    repo = identify(RepoConfig(source="github:acme/up"))
    assert (repo.key, repo.name, repo.own_name) == ("up", "acme/up", "up")
    assert repo.names == ("up", "acme/up")


def test_select_repos_hands_out_the_identities_it_checked() -> None:
    configured = (RepoConfig(source="github:acme/up"), RepoConfig(source="github:acme/down"))
    chosen = select_repos(configured, only=("down",))
    assert [(r.key, r.config) for r in chosen] == [("down", configured[1])]
