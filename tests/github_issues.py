"""Issues and issue comments for :class:`tests.github_server.FakeGitHub`, in GitHub's shapes.

Served for each repository added with :meth:`IssueTracker.add_repo`::

    GET    /user                                   the token's user (401 without a token)
    GET    /repos/{o}/{n}/issues?state&labels&creator&since&sort&direction&per_page&page
    POST   /repos/{o}/{n}/issues                   {title, body, labels} -> 201
    GET    /repos/{o}/{n}/issues/{number}
    PATCH  /repos/{o}/{n}/issues/{number}          {title, body, state, state_reason, labels}
    GET    /repos/{o}/{n}/issues/{number}/comments?per_page&page
    POST   /repos/{o}/{n}/issues/{number}/comments {body} -> 201
    PATCH  /repos/{o}/{n}/issues/comments/{id}     {body}
    DELETE /repos/{o}/{n}/issues/comments/{id}     -> 204

Like GitHub: a body over 65,536 characters is a 422 "Validation Failed"
naming the field; writes need a token (401 "Requires authentication"),
and ``read_only`` answers writes with 403; ``issues_disabled`` answers 410.
Listings are newest first by default and paginate with ``Link``.

Nothing here imports repoherald or pytest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

MAX_BODY = 65_536


class IssueReply(Exception):
    """An answer other than 200: status and JSON body (None: no content)."""

    def __init__(self, status: int, body: Any) -> None:
        self.status, self.body = status, body


def _error(status: int, message: str, **extra: Any) -> IssueReply:
    doc = "https://docs.github.com/rest/issues/issues"
    return IssueReply(status, {"message": message, "documentation_url": doc, **extra})


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _IssueRepo:
    full_name: str
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    read_only: bool = False
    issues_disabled: bool = False


class IssueTracker:
    """The issues of the repositories it was given; ``login`` is the token's user."""

    def __init__(self, api: Callable[[], str], web: Callable[[], str]) -> None:
        self._api, self._web = api, web
        self.login = "repoherald-bot"
        self.app_token = False
        """True: ``/user`` answers 403 as for a GitHub App installation token."""
        self._repos: dict[str, _IssueRepo] = {}
        self._next_id = 1_000_000_000_000

    def add_repo(self, full_name: str, *, read_only: bool = False) -> None:
        self._repos[full_name.lower()] = _IssueRepo(full_name, read_only=read_only)

    def disable(self, full_name: str) -> None:
        self._repos[full_name.lower()].issues_disabled = True

    def has(self, full_name: str) -> bool:
        return full_name.lower() in self._repos

    def issues(self, full_name: str) -> list[dict[str, Any]]:
        """Every issue, by number, with its comments' bodies under ``_comments``."""
        repo = self._repos[full_name.lower()]
        out = []
        for number in sorted(repo.issues):
            issue = dict(repo.issues[number])
            issue["_comments"] = [
                c["body"] for c in sorted(repo.comments.values(), key=lambda c: c["id"])
                if c["_issue"] == number
            ]  # fmt: skip
            out.append(issue)
        return out

    def comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        """The comments of issue ``number`` as the API shows them, oldest first."""
        repo = self._repos[full_name.lower()]
        found = [self._public(c) for c in repo.comments.values() if c["_issue"] == number]
        return sorted(found, key=lambda c: c["id"])

    def add_issue(
        self, full_name: str, title: str, body: str, *, author: str | None = None,
        labels: tuple[str, ...] = (), state: str = "open",
    ) -> dict[str, Any]:  # fmt: skip
        """An issue opened by someone (``author``, default the token's user)."""
        repo = self._repos[full_name.lower()]
        issue = self._new_issue(repo, title, body, list(labels), author or self.login)
        issue["state"] = state
        return issue

    def add_comment(self, full_name: str, number: int, body: str, author: str) -> dict[str, Any]:
        return self._new_comment(self._repos[full_name.lower()], number, body, author)

    # -- routing -----------------------------------------------------------------

    def user(self, authed: bool) -> dict[str, Any]:
        if not authed:
            raise _error(401, "Requires authentication")
        if self.app_token:
            raise _error(403, "Resource not accessible by integration")
        return {"login": self.login, "id": 1, "type": "User"}

    def route(
        self, method: str, name: str, rest: str, q: dict[str, str], body: Any, authed: bool
    ) -> Any:
        repo = self._repos[name.lower()]
        if repo.issues_disabled:
            raise _error(410, "Issues are disabled for this repo")
        if method != "GET":
            if not authed:
                raise _error(401, "Requires authentication")
            if repo.read_only:
                raise _error(403, "Resource not accessible by personal access token")
        parts = rest.strip("/").split("/")
        if parts == ["issues"]:
            if method == "POST":
                data = self._json(body, {"title"})
                labels = [str(x) for x in data.get("labels") or []]
                self._check_body(data, "Issue")
                issue = self._new_issue(repo, data["title"], data.get("body"), labels, self.login)
                raise IssueReply(201, self._public(issue))
            return self._list_issues(repo, q)
        if len(parts) == 2 and parts[1].isdigit():
            issue = self._issue(repo, int(parts[1]))
            if method == "PATCH":
                self._patch_issue(issue, self._json(body, set()))
            return self._public(issue)
        if len(parts) == 3 and parts[1].isdigit() and parts[2] == "comments":
            number = int(parts[1])
            self._issue(repo, number)
            if method == "POST":
                data = self._json(body, {"body"})
                self._check_body(data, "IssueComment")
                comment = self._new_comment(repo, number, data["body"], self.login)
                raise IssueReply(201, self._public(comment))
            found = [c for c in repo.comments.values() if c["_issue"] == number]
            return sorted((self._public(c) for c in found), key=lambda c: c["id"])
        if len(parts) == 3 and parts[1] == "comments" and parts[2].isdigit():
            comment = repo.comments.get(int(parts[2]))
            if comment is None:
                raise _error(404, "Not Found")
            if method == "DELETE":
                del repo.comments[comment["id"]]
                repo.issues[comment["_issue"]]["comments"] -= 1
                raise IssueReply(204, None)
            if method == "PATCH":
                data = self._json(body, {"body"})
                self._check_body(data, "IssueComment")
                comment.update(body=data["body"], updated_at=_now())
            return self._public(comment)
        raise _error(404, "Not Found")

    # -- pieces ------------------------------------------------------------------

    def _json(self, body: Any, required: set[str]) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _error(400, "Problems parsing JSON")
        missing = sorted(required - set(body))
        if missing:
            raise _error(422, "Invalid request.", errors=[f'"{missing[0]}" wasn\'t supplied.'])
        return body

    def _check_body(self, data: dict[str, Any], resource: str) -> None:
        text = data.get("body")
        if isinstance(text, str) and len(text) > MAX_BODY:
            error = {
                "resource": resource,
                "code": "custom",
                "field": "body",
                "message": f"body is too long (maximum is {MAX_BODY} characters)",
            }
            raise _error(422, "Validation Failed", errors=[error])

    def _issue(self, repo: _IssueRepo, number: int) -> dict[str, Any]:
        issue = repo.issues.get(number)
        if issue is None:
            raise _error(404, "Not Found")
        return issue

    def _patch_issue(self, issue: dict[str, Any], data: dict[str, Any]) -> None:
        self._check_body(data, "Issue")
        for key in ("title", "body"):
            if key in data:
                issue[key] = data[key]
        if "state" in data:
            if data["state"] not in ("open", "closed"):
                raise _error(422, "Validation Failed")
            issue["state"] = data["state"]
            closed = data["state"] == "closed"
            issue["state_reason"] = data.get("state_reason", "completed") if closed else "reopened"
            issue["closed_at"] = _now() if closed else None
        if "labels" in data:
            issue["labels"] = [self._label(i, n) for i, n in enumerate(data["labels"])]
        issue["updated_at"] = _now()

    def _label(self, i: int, name: str) -> dict[str, Any]:
        return {"id": i + 1, "name": name, "color": "ededed", "default": False}

    def _new_issue(
        self, repo: _IssueRepo, title: str, body: Any, labels: list[str], author: str
    ) -> dict[str, Any]:
        number = max(repo.issues, default=0) + 1
        self._next_id += 1
        api = f"{self._api()}/repos/{repo.full_name}/issues/{number}"
        issue = {
            "id": self._next_id,
            "node_id": f"I_{self._next_id}",
            "url": api,
            "repository_url": f"{self._api()}/repos/{repo.full_name}",
            "comments_url": f"{api}/comments",
            "html_url": f"{self._web()}/{repo.full_name}/issues/{number}",
            "number": number,
            "state": "open",
            "state_reason": None,
            "title": title,
            "body": body,
            "user": {"login": author, "id": 1 if author == self.login else 2, "type": "User"},
            "labels": [self._label(i, n) for i, n in enumerate(labels)],
            "assignees": [],
            "locked": False,
            "comments": 0,
            "created_at": _now(),
            "updated_at": _now(),
            "closed_at": None,
            "author_association": "OWNER",
        }
        repo.issues[number] = issue
        return issue

    def _new_comment(self, repo: _IssueRepo, number: int, body: str, author: str) -> dict[str, Any]:
        self._next_id += 1
        cid = self._next_id
        issue = repo.issues[number]
        comment = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{self._api()}/repos/{repo.full_name}/issues/comments/{cid}",
            "html_url": f"{issue['html_url']}#issuecomment-{cid}",
            "issue_url": issue["url"],
            "body": body,
            "user": {"login": author, "id": 1 if author == self.login else 2, "type": "User"},
            "created_at": _now(),
            "updated_at": _now(),
            "author_association": "OWNER",
            "_issue": number,
        }
        repo.comments[cid] = comment
        issue["comments"] += 1
        return comment

    def _public(self, obj: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in obj.items() if not k.startswith("_")}

    def _list_issues(self, repo: _IssueRepo, q: dict[str, str]) -> list[dict[str, Any]]:
        state = q.get("state", "open")
        wanted = {x for x in q.get("labels", "").split(",") if x}
        found = []
        for issue in repo.issues.values():
            names = {label["name"] for label in issue["labels"]}
            if state != "all" and issue["state"] != state:
                continue
            if not wanted <= names:
                continue
            if "creator" in q and issue["user"]["login"] != q["creator"]:
                continue
            if "since" in q and issue["updated_at"] < q["since"]:
                continue
            found.append(self._public(issue))
        reverse = q.get("direction", "desc") == "desc"
        key = "updated_at" if q.get("sort") == "updated" else "number"
        return sorted(found, key=lambda i: i[key], reverse=reverse)
