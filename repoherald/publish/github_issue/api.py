"""The GitHub issue and comment calls the ``github_issue`` publisher makes, with its errors.

A thin layer over :class:`~repoherald.github.client.GitHubClient` (which
retries 5xx, dropped connections and rate limits) that words every failure
as one line naming the target (``github_issue owner/name``), the token's
*variable* and what to do. The token itself is only ever in the
``Authorization`` header.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from repoherald.errors import PublishError, SourceError
from repoherald.github import parse
from repoherald.github.client import GitHubClient
from repoherald.github.errors import AmbiguousWriteError, GitHubError
from repoherald.redact import redact

MAX_LIST_PAGES = 10
"""Issues read (100 a page) when looking for one by its marker: recent ones come first."""

Issue = dict[str, Any]


class MaybeCreatedError(PublishError):
    """GitHub's answer to creating an issue or comment does not say whether it was made:
    look for it by its marker before creating it again."""


class IssueApi:
    """Issues and comments of one repository, through one client."""

    def __init__(self, client: GitHubClient, repo: str, token_env: str) -> None:
        self._client = client
        self.repo = repo
        self.label = f"github_issue {repo}"
        self._token_env = token_env
        self._base = f"repos/{repo}"
        self._login: tuple[str | None] | None = None

    def get_issue(self, number: int) -> Issue | None:
        """Issue ``number``, or None when it is gone (deleted, transferred)."""
        try:
            data = self._client.get(f"{self._base}/issues/{number}", cache=False)
        except GitHubError as exc:
            if exc.status in (404, 410):
                return None
            raise self._error(exc, "read issue") from None
        except SourceError as exc:
            raise self._error(exc, "read issue") from None
        return _object(data, "number")

    def find_issue(
        self, matches: Callable[[Issue], bool], params: dict[str, str]
    ) -> Iterator[Issue]:
        """Issues (not pull requests) of the listing ``params`` selects that ``matches``."""
        query = {"per_page": "100", "sort": "created", "direction": "desc", **params}
        try:
            pages = self._client.pages(f"{self._base}/issues", query)
            for _, page in zip(range(MAX_LIST_PAGES), pages, strict=False):
                for issue in page if isinstance(page, list) else []:
                    if (
                        isinstance(issue, dict)
                        and "pull_request" not in issue
                        and _numbered(issue, "number")
                        and matches(issue)
                    ):
                        yield issue
        except SourceError as exc:
            raise self._error(exc, "list issues") from None

    def login(self) -> str | None:
        """The token's user, to list only its issues; None for an app token (no user)."""
        if self._login is None:
            self._login = (self._read_login(),)
        return self._login[0]

    def _read_login(self) -> str | None:
        try:
            data = self._client.get("user", cache=False)
        except GitHubError as exc:
            if exc.status in (403, 404):
                return None
            raise self._error(exc, "identify the token's user") from None
        except SourceError as exc:
            raise self._error(exc, "identify the token's user") from None
        login = data.get("login") if isinstance(data, dict) else None
        return login if isinstance(login, str) else None

    def comments(self, number: int) -> list[Issue]:
        """Every comment of issue ``number``, oldest first."""
        out: list[Issue] = []
        try:
            for page in self._client.pages(
                f"{self._base}/issues/{number}/comments", {"per_page": "100"}
            ):
                items = page if isinstance(page, list) else []
                out.extend(c for c in items if isinstance(c, dict) and _numbered(c, "id"))
        except SourceError as exc:
            raise self._error(exc, "read comments") from None
        return out

    def create_issue(self, body: dict[str, Any]) -> Issue:
        """Open an issue; :class:`MaybeCreatedError` when the answer leaves it unknown."""
        path = f"{self._base}/issues"
        return _object(self._send("POST", path, body, "open an issue", creates=True), "number")

    def update_issue(self, number: int, body: dict[str, Any]) -> Issue:
        return _object(
            self._send("PATCH", f"{self._base}/issues/{number}", body, "edit issue"), "number"
        )

    def create_comment(self, number: int, text: str) -> Issue:
        """Add a comment; :class:`MaybeCreatedError` when the answer leaves it unknown."""
        path = f"{self._base}/issues/{number}/comments"
        return _object(
            self._send("POST", path, {"body": text}, "add a comment", creates=True), "id"
        )

    def update_comment(self, comment_id: int, text: str) -> Issue:
        path = f"{self._base}/issues/comments/{comment_id}"
        return _object(self._send("PATCH", path, {"body": text}, "edit a comment"), "id")

    def delete_comment(self, comment_id: int) -> None:
        path = f"{self._base}/issues/comments/{comment_id}"
        self._send("DELETE", path, None, "delete a comment")

    def _send(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        what: str,
        *,
        creates: bool = False,
    ) -> Any:
        try:
            return self._client.send(method, path, body, creates=creates)
        except AmbiguousWriteError as exc:
            cause = str(exc).removeprefix(f"{self.repo}: ")
            text = f"{self.label}: cannot tell whether GitHub managed to {what} ({cause})"
            raise MaybeCreatedError(redact(text)) from None
        except SourceError as exc:
            raise self._error(exc, what) from None

    def _error(self, exc: SourceError, what: str) -> PublishError:
        """One line for a failed call: the target, what failed, GitHub's words, what to do."""
        status = exc.status if isinstance(exc, GitHubError) else None
        detail = exc.detail if isinstance(exc, GitHubError) else ""
        env = f"${self._token_env}"
        if status == 401:
            text = f"GitHub rejected the token in {env} (HTTP 401): renew it"
        elif status == 403:
            text = (
                f"GitHub refused to {what} (HTTP 403: {detail}): give the token in {env}"
                f" Issues read and write access to {self.repo}"
            )
        elif status == 404:
            text = (
                f"cannot {what}: {self.repo} was not found (HTTP 404): check `repo`, and that"
                f" the token in {env} can see it"
            )
        elif status == 410:
            text = f"issues are disabled in {self.repo} (HTTP 410): enable them or change `repo`"
        elif status == 422:
            text = (
                f"GitHub refused to {what} (HTTP 422: {detail}): check `labels` and `title`;"
                " if it persists, report it to repoherald"
            )
        else:
            cause = str(exc).removeprefix(f"{self.repo}: ")
            text = f"cannot {what}: {cause}"
        return PublishError(redact(f"{self.label}: {text}"))


def _numbered(data: Issue, key: str) -> bool:
    """Whether ``data[key]`` is a real issue number or id (not ``"abc"``, not ``1e400``)."""
    try:
        parse.number(data.get(key), key, parse.MAX_ID if key == "id" else parse.MAX_NUMBER)
    except parse.ShapeError:
        return False
    return True


def _object(data: Any, key: str) -> Issue:
    """An issue (``key="number"``) or comment (``"id"``) answer, checked before it is used."""
    if not isinstance(data, dict):
        raise PublishError("github_issue: GitHub answered something that is not an object")
    if not _numbered(data, key):
        shown = str(data.get(key))[:30]
        raise PublishError(
            f"github_issue: GitHub answered an issue or comment whose {key} is {shown!r}, not"
            " a number: check [github] api_url, or retry later"
        )
    return data
