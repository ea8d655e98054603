"""Every user-facing string, in one catalogue per language, and the one way to look it up.

A language is one module here (its code is the module's name: :mod:`repoherald.i18n.zh`,
:mod:`repoherald.i18n.en`) with a ``CATALOGUE`` dict, plus its prompt templates
(``llm/prompts/system.<code>.j2``, ``user.<code>.j2``, ``repair.<code>.j2``). The
modules are found, not listed: every list of languages in the package is
:data:`LANGUAGES`. The catalogues hold report labels, the rules' reasons and
write-up, the notes the LLM path adds and the errors a report shows; nothing
else in the package spells out words a reader sees. Two kinds of text reach a report:

* prose in one language (a model's answer, an error): shown as it is;
* a :class:`~repoherald.models.Text` (a key and its arguments), which the
  rules store so that one analysis serves every language: localised here,
  at render time, by :func:`localise`.
"""

from __future__ import annotations

import importlib
import pkgutil
import string
from dataclasses import replace
from typing import Any

from repoherald.models import Analysis, Arg, ChangeType, Importance, Message, Risk, Text

DEFAULT_LANGUAGE = "zh"
"""The report language when none is set, and the archive's untagged one (``2026-08-20.md``)."""
CONSOLE_LANGUAGE = "en"
"""The language of what the command line itself says (progress, errors)."""


def _catalogues() -> dict[str, dict[str, str]]:
    """Every catalogue module of this package by language code, the default language first."""
    codes = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    codes.sort(key=lambda code: code != DEFAULT_LANGUAGE)
    return {code: importlib.import_module(f"{__name__}.{code}").CATALOGUE for code in codes}


CATALOGUES: dict[str, dict[str, str]] = _catalogues()
LANGUAGES: tuple[str, ...] = tuple(CATALOGUES)

EMOJI = {Importance.HIGH: "🔴", Importance.MEDIUM: "🟡", Importance.LOW: "🟢"}


class _CatalogueFormatter(string.Formatter):
    """``str.format`` plus one spec for counted nouns: ``{n:p/file/files}``.

    The spec prints the first word when the value is 1 and the second
    otherwise, so English says "1 file" and "2 files" from one catalogue
    entry (``"{n} {n:p/file/files}"``); languages without plural forms
    simply do not use it.
    """

    def format_field(self, value: Any, format_spec: str) -> Any:
        if format_spec.startswith("p/"):
            one, _, many = format_spec[2:].partition("/")
            return one if value == 1 else many
        return super().format_field(value, format_spec)


_FORMATTER = _CatalogueFormatter()


def fill(entry: str, args: dict[str, Any]) -> str:
    """A catalogue entry with its arguments (arguments are data, never format strings)."""
    return _FORMATTER.vformat(entry, (), args)


def t(lang: str, key: str, **kwargs: Any) -> str:
    """The text for ``key`` in ``lang``, formatted with ``kwargs``."""
    text = CATALOGUES[lang][key]
    return fill(text, kwargs) if kwargs else text


def type_label(lang: str, change_type: ChangeType) -> str:
    """The change type's name in ``lang`` (``新功能`` / ``Feature``)."""
    return CATALOGUES[lang]["type." + change_type.value]


def importance_label(lang: str, importance: Importance) -> str:
    """The importance's word in ``lang`` (``高`` / ``High``)."""
    return CATALOGUES[lang]["importance." + importance.value]


def importance_badge(lang: str, importance: Importance) -> str:
    """``🔴 高`` — always the emoji, one space, the word."""
    return f"{EMOJI[importance]} {importance_label(lang, importance)}"


def type_text(change_type: ChangeType) -> Text:
    """The change type's label as a language-neutral message."""
    return Text("type." + change_type.value)


def localise(lang: str, message: Message) -> str:
    """A message as text in ``lang``: prose as it is, a :class:`Text` from the catalogue."""
    if isinstance(message, str):
        return message
    catalogue = CATALOGUES[lang]
    if message.code.startswith("join."):
        items = message.args.get("items", ())
        assert isinstance(items, tuple)
        return catalogue[message.code].join(localise(lang, item) for item in items)
    text = catalogue[message.code]
    if not message.args:
        return text
    return fill(text, {name: _argument(lang, value) for name, value in message.args.items()})


def _argument(lang: str, value: Arg) -> str | int:
    if isinstance(value, Text):
        return localise(lang, value)
    if isinstance(value, tuple):
        return CATALOGUES[lang]["join.list"].join(localise(lang, item) for item in value)
    return value


def localise_analysis(lang: str, analysis: Analysis) -> Analysis:
    """The same analysis with every message turned into prose in ``lang``.

    The LLM path works on prose: its prompt quotes the rules' reasons, and
    its own analysis (cached per language) carries some of the rules' text.
    """

    def say(message: Message) -> str:
        return localise(lang, message)

    return replace(
        analysis,
        reasons=tuple(map(say, analysis.reasons)),
        summary=say(analysis.summary),
        impact=tuple(map(say, analysis.impact)),
        insights={k: say(v) for k, v in analysis.insights.items()},
        risks=tuple(Risk(say(r.risk), say(r.detail), say(r.mitigation)) for r in analysis.risks),
        recommendations=tuple(map(say, analysis.recommendations)),
        error=say(analysis.error),
        llm_error=say(analysis.llm_error),
    )
