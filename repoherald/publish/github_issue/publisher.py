"""The ``github_issue`` publisher: one GitHub issue per repository-day, edited when it changes.

The issue is found again by the ledger's remote id (its number), and when
the ledger was lost, by the hidden marker its body starts with
(``<!-- repoherald:v1 repo=<name> day=<YYYY-MM-DD> -->``) among the recent
issues of the token's user carrying the configured labels. The marker is
matched only at the very start of a body, where report text never is, so a
commit message quoting it cannot redirect the publisher.

A create that GitHub answers ambiguously (a 5xx, or a connection lost after
the request went out) may have worked: it is never retried blind. The
issue (or comment) is looked for by its marker first and adopted when
found, so a 502 after a successful ``POST /issues`` does not open a second
issue. For the same reason a delivery interrupted by a killed process can
simply be made again (``finds_what_it_sent``): the marker finds what the
killed process opened.

A report longer than GitHub's 65,536-character limit is cut into the body
and follow-up comments (:mod:`repoherald.publish.github_issue.split`); each comment
starts with the marker and its part number, so an edit reuses, adds or
deletes comments as the cut changes. The issue is opened first, then the
comments are posted, then links to headings that landed in comments are
pointed at those comments' URLs (only what changed is patched).

Links to github.com pull requests go through GitHub's redirect host, so the
daily issue does not leave a "mentioned this" event on every upstream pull
request it lists (:mod:`repoherald.publish.github_issue.text`).

The token comes from the variable ``token_env`` names (``[github]``'s by
default) and goes only into the ``Authorization`` header.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, ClassVar

from repoherald.config.endpoints import GitHubSettings
from repoherald.errors import PublishError, SourceError
from repoherald.github.connect import open_client
from repoherald.publish.base import Delivery, Publication, PublisherOptions, Status
from repoherald.publish.github_issue.api import Issue, IssueApi, MaybeCreatedError
from repoherald.publish.github_issue.options import MAX_TITLE, GitHubIssueOptions
from repoherald.publish.github_issue.split import (
    LIMIT,
    MARGIN,
    Part,
    link_parts,
    size,
    split_report,
)
from repoherald.publish.github_issue.text import marker, no_backlinks, read_marker
from repoherald.redact import secret_env

_COMMENT_LINK = len("#issuecomment-") + 20
"""A comment URL is the issue's URL plus this much at most (ids are 64-bit)."""
CREATE_ATTEMPTS = 3
"""Creates of one issue or comment answered ambiguously, each followed by a look for it."""


class GitHubIssuePublisher:
    """Opens, and edits in place, one issue per repository-day."""

    type: ClassVar[str] = "github_issue"
    Options: ClassVar[builtins.type[PublisherOptions]] = GitHubIssueOptions
    edits_in_place: ClassVar[bool] = True
    finds_what_it_sent: ClassVar[bool] = True

    def __init__(self, options: GitHubIssueOptions, transport: Any = None) -> None:
        self.options = options
        self._transport = transport

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        o: GitHubIssueOptions = options
        return (o.token_env,)

    @property
    def label(self) -> str:
        return f"github_issue {self.options.repo}"

    def publish(self, item: Publication) -> Delivery:
        o = self.options
        token = secret_env(o.token_env)
        if not token:
            raise PublishError(
                f"{self.label}: environment variable {o.token_env} is not set: export it with a"
                " GitHub token that can write issues"
            )
        settings = GitHubSettings(api_url=o.api_url, token_env=o.token_env, max_wait_seconds=60)
        try:
            client = open_client(settings, o.repo, None, token=token, transport=self._transport)
        except SourceError as exc:
            raise PublishError(f"{self.label}: {exc}") from None
        try:
            api = IssueApi(client, o.repo, o.token_env)
            issue, created, ids = self._deliver(api, item)
        finally:
            client.close()
        number = int(issue["number"])
        what = "opened" if created else "updated"
        extra = f" with {len(ids)} comment(s)" if ids else ""
        return Delivery(
            Status.SENT,
            json.dumps({"issue": number, "comments": ids}),
            item.content_hash(),
            f"{self.label}: {what} #{number}{extra}",
        )

    def describe(self, items: Sequence[Publication]) -> tuple[str, int]:
        """What :meth:`publish` would do (``--dry-run``), with no token and no request.

        The issue is named when the ledger knows its number; otherwise the
        publisher would first look for the day's issue by its marker, which
        takes requests, so it says it would open or edit one.
        """
        (item,) = items
        o = self.options
        parts = self._split(item, self._link_size())
        texts = [marker(item.name, item.day, k or None) + p.text for k, p in enumerate(parts)]
        number = _issue_number(item.sent_as)
        action = f"edit issue #{number}" if number else "open or edit the day's issue"
        largest = max(size(text) for text in texts)
        what = (
            f"would {action} in {o.repo}: body + {len(texts) - 1} comment(s),"
            f" largest {largest:,} of {LIMIT:,} characters"
        )
        return what, sum(len(text.encode("utf-8")) for text in texts)

    def _link_size(self) -> int:
        """A bound on a comment URL's length before the issue's own URL is known."""
        o = self.options
        return len(o.api_url) + len(o.repo) + len("/issues/") + 20 + _COMMENT_LINK

    def _deliver(self, api: IssueApi, item: Publication) -> tuple[Issue, bool, list[int]]:
        """Open or find the day's issue, then make its body and comments say ``item``."""
        o = self.options
        title = o.title.format(name=item.name, date=item.day.isoformat(), lang=item.lang)
        title = title[:MAX_TITLE]
        head = marker(item.name, item.day)
        issue = self._existing(api, item)
        link = self._link_size()
        if issue is not None:
            link = len(str(issue.get("html_url", ""))) + _COMMENT_LINK
        parts = self._split(item, link)
        created = issue is None
        if issue is None:
            body: dict[str, Any] = {"title": title, "body": head + parts[0].text}
            if o.labels:
                body["labels"] = list(o.labels)
            issue = self._create_issue(api, item, body)
            if len(str(issue.get("html_url", ""))) + _COMMENT_LINK > link:
                parts = self._split(item, len(str(issue["html_url"])) + _COMMENT_LINK)
        number = int(issue["number"])
        old = {} if created else self._our_comments(api, issue, item)
        texts: dict[int, str] = {}
        ids: list[int] = []
        for k, part in enumerate(parts[1:], start=1):
            comment = old.pop(k, None)
            if comment is None:
                text = marker(item.name, item.day, k) + part.text
                comment = self._create_comment(api, issue, item, k, text)
            texts[k] = str(comment.get("body", ""))
            ids.append(int(comment["id"]))
        for comment in old.values():
            api.delete_comment(int(comment["id"]))
        final = link_parts(parts, str(issue["html_url"]), ids)
        changes: dict[str, Any] = {}
        if issue.get("body") != head + final[0]:
            changes["body"] = head + final[0]
        if issue.get("title") != title:
            changes["title"] = title
        if changes:
            issue = {**issue, **api.update_issue(number, changes)}
        for k, text in enumerate(final[1:], start=1):
            if texts[k] != marker(item.name, item.day, k) + text:
                api.update_comment(ids[k - 1], marker(item.name, item.day, k) + text)
        if created and o.close_previous:
            self._close_previous(api, item, number)
        return issue, created, ids

    def _create_issue(self, api: IssueApi, item: Publication, body: dict[str, Any]) -> Issue:
        """Open the day's issue; after an ambiguous answer, adopt it if it was opened."""
        for _ in range(CREATE_ATTEMPTS):
            try:
                return api.create_issue(body)
            except MaybeCreatedError as exc:
                problem = exc
            found = self._existing(api, item)
            if found is not None:
                return found
        raise PublishError(
            f"{problem}; no issue with the day's marker was found after {CREATE_ATTEMPTS}"
            " tries: retry later"
        )

    def _create_comment(
        self, api: IssueApi, issue: Issue, item: Publication, part: int, text: str
    ) -> Issue:
        """Post comment ``part``; after an ambiguous answer, adopt it if it was posted."""
        for _ in range(CREATE_ATTEMPTS):
            try:
                return api.create_comment(int(issue["number"]), text)
            except MaybeCreatedError as exc:
                problem = exc
            found = self._our_comments(api, issue, item).get(part)
            if found is not None:
                return found
        raise PublishError(
            f"{problem}; no comment with part {part}'s marker was found after"
            f" {CREATE_ATTEMPTS} tries: retry later"
        )

    def _split(self, item: Publication, link: int) -> list[Part]:
        budget = LIMIT - MARGIN - size(marker(item.name, item.day, 10**6))
        return split_report(no_backlinks(item.markdown), budget, link, item.lang)

    def _existing(self, api: IssueApi, item: Publication) -> Issue | None:
        """The day's issue: by the ledger's number, else by its marker among recent issues."""
        number = _issue_number(item.sent_as)
        if number is not None:
            issue = api.get_issue(number)
            if issue is not None and self._is_day(issue, item):
                return issue
        since = item.day - timedelta(days=2)
        params = self._listing(api, "all")
        params["since"] = f"{since.isoformat()}T00:00:00Z"
        login = params.get("creator")
        queries = [params]
        if login is not None and "labels" in params:
            # GitHub drops the labels of an issue opened by a user who cannot push
            # to the repository, without an error: look among the user's own too.
            queries.append({k: v for k, v in params.items() if k != "labels"})
        for query in queries:
            for issue in api.find_issue(lambda i: self._is_day(i, item), query):
                if login is None or _author(issue) == login:
                    return issue
        return None

    def _listing(self, api: IssueApi, state: str) -> dict[str, str]:
        """Query of the issues this target may have opened: its labels, its user's."""
        params = {"state": state}
        if self.options.labels:
            params["labels"] = ",".join(self.options.labels)
        login = api.login()
        if login is not None:
            params["creator"] = login
        return params

    def _is_day(self, issue: Issue, item: Publication) -> bool:
        return read_marker(issue.get("body")) == (item.name, item.day, None)

    def _our_comments(self, api: IssueApi, issue: Issue, item: Publication) -> dict[int, Issue]:
        """The issue's comments that hold parts of this day's report, by part number.

        Only comments by the issue's author count: someone quoting a marker in a
        comment of their own does not make it one of ours.
        """
        out: dict[int, Issue] = {}
        for comment in api.comments(int(issue["number"])):
            found = read_marker(comment.get("body"))
            if found is None or found[:2] != (item.name, item.day) or found[2] is None:
                continue
            if _author(comment) == _author(issue) and found[2] not in out:
                out[found[2]] = comment
        return out

    def _close_previous(self, api: IssueApi, item: Publication, number: int) -> None:
        """Close this target's open issues of the same repository for earlier days."""

        def earlier(issue: Issue) -> bool:
            found = read_marker(issue.get("body"))
            return (
                found is not None
                and found[0] == item.name
                and found[1] < item.day
                and found[2] is None
                and issue.get("number") != number
            )

        for issue in list(api.find_issue(earlier, self._listing(api, "open"))):
            api.update_issue(int(issue["number"]), {"state": "closed", "state_reason": "completed"})


def _issue_number(remote_id: str | None) -> int | None:
    """The issue number of a ledger remote id (JSON ``{"issue": N, ...}``, or a bare number)."""
    if not remote_id:
        return None
    try:
        data = json.loads(remote_id)
    except ValueError:
        return None
    value = data.get("issue") if isinstance(data, dict) else data
    return value if isinstance(value, int) and value > 0 else None


def _author(obj: Issue) -> str | None:
    user = obj.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None
