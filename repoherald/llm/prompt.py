"""What the model is shown: the prompt templates, and the commit's and PR's words as data.

Each language has its own templates, chosen by its code: ``system.<code>.j2``,
``user.<code>.j2`` (which extends the shared ``user.j2`` with its task line)
and ``repair.<code>.j2``; with its catalogue, that is all a language adds.

Untrusted text (commit message, pull-request description) is cleaned of
trailers and e-mail addresses and cannot close the prompt's delimited data
block; the repair turn asks for valid JSON after an answer that was not.
Whatever changes here changes the prompt: bump
:data:`repoherald.llm.analyser.PROMPT_VERSION` so cached analyses are redone.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

import jinja2

from repoherald.emails import hide_emails
from repoherald.llm.client import dumps_schema
from repoherald.llm.facts_text import fact_lines
from repoherald.llm.job import LlmJob
from repoherald.llm.schema import FullAnswer, ShortAnswer, limits_text, response_schema
from repoherald.models import PullRequest

_TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|cc|"
    r"change-id)\s*:.*$",
    re.I | re.M,
)


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("repoherald", "llm/prompts"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )


def clean_message(message: str) -> str:
    """The commit message as the model sees it: trailers and e-mail addresses removed."""
    text = _TRAILER.sub("", message)
    text = hide_emails(text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def system_prompt(lang: str, native_schema: bool) -> str:
    """The system message: the same bytes for every commit of a run in ``lang``.

    Providers cache a request's prefix only when it is byte-identical, so
    nothing per-commit (repository, nonce, facts) may enter it. Without
    native structured output both schemas are written out, so the short and
    the full request share it too.
    """
    return _system(lang, native_schema)


@lru_cache(maxsize=8)
def _system(lang: str, native_schema: bool) -> str:
    return (
        _env()
        .get_template(f"system.{lang}.j2")
        .render(
            limits=limits_text(FullAnswer, lang),
            schema_in_prompt=not native_schema,
            short_schema=dumps_schema(response_schema(ShortAnswer, lang)),
            full_schema=dumps_schema(response_schema(FullAnswer, lang)),
        )
    )


def messages(
    job: LlmJob,
    lang: str,
    depth: str,
    native_schema: bool,
    diff: Any,
) -> list[dict[str, str]]:
    """The system and user messages of one request (``diff`` None: the prompt without it)."""
    nonce = hashlib.sha256(f"repoherald:{job.commit.sha}".encode()).hexdigest()[:16]
    user = (
        _env()
        .get_template(f"user.{lang}.j2")
        .render(
            repo=job.repo,
            nonce=nonce,
            depth=depth,
            facts_lines=fact_lines(job),
            title=hide_emails(job.commit.title),
            author=job.commit.author.name,
            **_pr_fields(job.facts.pull_request),
            message=clean_message(job.commit.body),
            facts=job.facts,
            unseen=list(diff.unseen) if diff is not None else [],
            diff=diff.text if diff is not None else "",
        )
    )
    return [
        {"role": "system", "content": system_prompt(lang, native_schema)},
        {"role": "user", "content": user},
    ]


def prefix_share(request: list[dict[str, str]]) -> float:
    """The share of a request's prompt characters in its constant prefix (the system message).

    What a provider's prefix cache can serve from a run's second commit on;
    the bench reports it. 0.0 for a request without a leading system message.
    """
    total = sum(len(m["content"]) for m in request)
    if not total or request[0]["role"] != "system":
        return 0.0
    return len(request[0]["content"]) / total


def repair_prompt(lang: str, error: str) -> str:
    """The follow-up turn after an answer that did not validate, quoting the first error."""
    return _env().get_template(f"repair.{lang}.j2").render(error=error)


PR_BODY_CHARS = 4000
_DELIMITER = re.compile(r"</?\s*commit-data", re.IGNORECASE)


def _pr_fields(pr: PullRequest | None) -> dict[str, str]:
    """The pull request's own words for the prompt, as data.

    A PR description can be edited after the commit exists, so unlike the
    commit message it could carry the data block's closing tag: any
    delimiter-like text is defused before it reaches the prompt.
    """
    if pr is None:
        return {"pr_title": "", "pr_labels": "", "pr_body": ""}

    def inert(text: str) -> str:
        return _DELIMITER.sub("(commit data)", hide_emails(text))

    return {
        "pr_title": inert(pr.title),
        "pr_labels": inert(", ".join(pr.labels)),
        "pr_body": inert(clean_message(pr.body)[:PR_BODY_CHARS]),
    }
