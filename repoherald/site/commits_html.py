"""The commits of a day page as HTML: table rows and one ``<article>`` per commit.

These are the bulk of every day page (a year of ten repositories is about
100,000 of them), so they are written with string formatting rather than
template calls, which took most of a full build. The policy is the
template's: every value is cleaned text (:func:`~repoherald.site.text.line`)
escaped here with :func:`html.escape`, every URL already passed
:func:`~repoherald.site.links.safe_link`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from typing import Any

from repoherald.i18n import t
from repoherald.site.daypage import INSIGHT_KEYS, badge, catalogue_lang, type_name

Commit = dict[str, Any]

LABEL_KEYS = (
    "field_labels", "field_author", "field_coauthors", "field_files", "field_areas", "field_type",
    "field_importance", "field_correction", "field_reasons", "field_related", "field_summary",
    "field_summary_full", "field_description", "field_impact", "field_insights", "field_risks",
    "field_recommendations", "mitigation_col", "view_commit",
    *(f"insight_{k}" for k in INSIGHT_KEYS),
)  # fmt: skip


def rich(value: str) -> str:
    """Escaped cleaned text whose paired backticks become ``<code>`` (as ``text.rich``)."""
    if "`" not in value or value.count("`") % 2:
        return escape(value)
    return "".join(
        f"<code>{escape(part)}</code>" if i % 2 and part.strip() else escape(part)
        for i, part in enumerate(value.split("`"))
    )


class Labels:
    """The words of one page's language, looked up once per page, not once per commit."""

    def __init__(self, lang: str) -> None:
        cat = catalogue_lang(lang)
        self.lang = cat
        self.words = {k: escape(t(cat, k)) for k in LABEL_KEYS}
        self.badges = {i: escape(badge(lang, i)) for i in ("high", "medium", "low")}
        self._types: dict[str, str] = {}
        self._type_name: Callable[[str], str] = lambda ty: type_name(lang, ty)

    def type(self, change_type: str) -> str:
        if change_type not in self._types:
            self._types[change_type] = escape(self._type_name(change_type))
        return self._types[change_type]

    def pr(self, n: int) -> str:
        return escape(t(self.lang, "view_pr", n=n))


def attrs(c: Commit) -> str:
    """The filter data of a commit (read by ``site.js``)."""
    areas = escape(json.dumps(c["areas"], ensure_ascii=False))
    labels = escape(json.dumps(c["labels"], ensure_ascii=False))
    return (
        f'data-commit data-importance="{c["importance"]}" data-type="{escape(c["type"])}"'
        f' data-areas="{areas}" data-labels="{labels}" data-affects="{1 if c["affects"] else 0}"'
    )


def _link(url: str, html: str) -> str:
    """A link to a page off the site (``url`` passed ``safe_link``; ``html`` is escaped)."""
    return f'<a href="{escape(url)}" rel="noopener noreferrer">{html}</a>'


def _sha(c: Commit) -> str:
    code = f"<code>{escape(c['short_sha'])}</code>"
    if c["url"]:
        return f'<a href="{escape(c["url"])}" rel="noopener noreferrer">{code}</a>'
    return code


def rows(commits: list[Commit], L: Labels) -> str:
    """One ``<tr>`` per commit for the commits table."""
    out = []
    for c in commits:
        fix = f" (✍️ {L.badges.get(c['correction']['badge'], '')})" if c["correction"] else ""
        out.append(
            f"<tr {attrs(c)}><td>{escape(c['time'])}</td><td>{escape(c['author'])}</td>"
            f'<td><a href="#{escape(c["anchor"])}">{rich(c["title"])}</a></td>'
            f"<td>{L.badges[c['importance']]}{fix}</td><td>{_sha(c)}</td></tr>"
        )
    return "\n".join(out)


def _dl(c: Commit, L: Labels) -> list[str]:
    w = L.words
    out = ["<dl>"]
    if c["labels"]:
        codes = ", ".join(f'<code class="label">{escape(x)}</code>' for x in c["labels"])
        out.append(f"<dt>{w['field_labels']}</dt><dd>{codes}</dd>")
    co = (
        f" ({w['field_coauthors']}: {escape(', '.join(c['co_authors']))})"
        if c["co_authors"]
        else ""
    )
    out.append(f"<dt>{w['field_author']}</dt><dd>{escape(c['author'])}{co}</dd>")
    out.append(f"<dt>{w['field_files']}</dt><dd>{c['files']} · +{c['added']}/−{c['deleted']}</dd>")
    if c["areas"]:
        areas = ", ".join(f"<code>{escape(a)}</code>" for a in c["areas"])
        out.append(f"<dt>{w['field_areas']}</dt><dd>{areas}</dd>")
    out.append(f"<dt>{w['field_type']}</dt><dd>{L.type(c['type'])}</dd>")
    out.append(f"<dt>{w['field_importance']}</dt><dd>{L.badges[c['importance']]}</dd>")
    if c["correction"]:
        k = c["correction"]
        reason = f": {rich(k['reason'])}" if k["reason"] else ""
        out.append(
            f"<dt>{w['field_correction']}</dt><dd>{L.badges.get(k['badge'], '')}{reason}</dd>"
        )
    reasons = "; ".join(rich(r) for r in c["reasons"])
    out.append(f"<dt>{w['field_reasons']}</dt><dd>{reasons}</dd>")
    if c["related"]:
        links = []
        for r in c["related"]:
            sha = f"<code>{escape(r['sha'])}</code>"
            if r["url"]:
                sha = f'<a href="{escape(r["url"])}" rel="noopener noreferrer">{sha}</a>'
            links.append(f"{escape(r['kind'])} {sha} «{escape(r['title'])}» {escape(r['day'])}")
        out.append(f"<dt>{w['field_related']}</dt><dd>{'; '.join(links)}</dd>")
    key = "field_summary" if c["importance"] == "low" else "field_summary_full"
    out.append(f"<dt>{w[key]}</dt><dd>{rich(c['summary'])}</dd>")
    out.append("</dl>")
    return out


def _detail(c: Commit, L: Labels) -> list[str]:
    """Description, impact, insights, risks and recommendations (not for a 🟢 commit)."""
    w = L.words
    out: list[str] = []
    if c["description"]:
        out.append(f"<p><strong>{w['field_description']}</strong></p>")
        out.append(f"<blockquote>{rich(c['description'])}</blockquote>")
    if c["impact"]:
        items = "".join(f"<li>{rich(i)}</li>" for i in c["impact"])
        out.append(f"<p><strong>{w['field_impact']}</strong></p><ul>{items}</ul>")
    high = c["importance"] == "high"
    if high and c["insights"]:
        items = "".join(
            f"<li><strong>{w['insight_' + k]}</strong>: {rich(v)}</li>"
            for k, v in c["insights"].items()
        )
        out.append(f"<p><strong>{w['field_insights']}</strong></p><ul>{items}</ul>")
    if high and c["risks"]:
        items = "".join(
            f"<li><strong>{rich(r['risk'])}</strong>: {rich(r['detail'])}."
            f" {w['mitigation_col']}: {rich(r['mitigation'])}</li>"
            for r in c["risks"]
        )
        out.append(f"<p><strong>{w['field_risks']}</strong></p><ol>{items}</ol>")
    # A medium block shows no risks, so their mitigations are its recommendations
    # when it has none of its own (as in the Markdown report).
    recs = c["recommendations"] if (c["recommendations"] or high) else [
        r["mitigation"] for r in c["risks"]
    ]  # fmt: skip
    if recs:
        items = "".join(f"<li>{rich(r)}</li>" for r in recs)
        out.append(f"<p><strong>{w['field_recommendations']}</strong></p><ol>{items}</ol>")
    return out


def articles(commits: list[Commit], L: Labels) -> str:
    """One ``<article class="commit">`` per commit, with its analysis."""
    w = L.words
    out = []
    for c in commits:
        head = f"<p><strong>SHA</strong>: <code>{escape(c['short_sha'])}</code>"
        if c["url"]:
            head += " · " + _link(c["url"], w["view_commit"])
        if c["pr_url"] and c["pr_number"] is not None:
            head += " · " + _link(c["pr_url"], L.pr(c["pr_number"]))
        elif c["pr_number"] is not None:
            head += f" · PR <code>#{c['pr_number']}</code>"
        parts = [
            f'<article class="commit" id="{escape(c["anchor"])}" {attrs(c)}>'
            f'<span id="c-{escape(c["sha"][:10])}"></span>',
            f"<h4>{rich(c['title'])}</h4>",
            head + "</p>",
            *_dl(c, L),
        ]
        if c["error"]:
            parts.append(f'<p class="error">❌ {rich(c["error"])}</p>')
        if c["llm_error"]:
            parts.append(f'<p class="note">{rich(c["llm_error"])}</p>')
        if c["importance"] != "low":
            parts += _detail(c, L)
        parts.append("</article>")
        out.append("\n".join(parts))
    return "\n".join(out)
