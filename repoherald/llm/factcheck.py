"""Check an LLM answer's concrete claims against what the commit actually contains.

The old tool published invented figures ("预计可提升 1-3% 的吞吐量") and file
paths that were not in the change. A reader cannot tell an invented number
from a measured one, so every concrete token the model writes -- a path, a
code identifier, a figure -- must be traceable to the commit: its paths, its
message and diff, or the figures of the rule facts. What cannot be traced is
not silently kept:

* a claim that is clearly false -- a path or a CVE id found nowhere in the
  commit, not in its changed files and not in its message or diff text --
  removes its list item (``impact``, ``recommendations``, a whole risk),
  because an item is one claim and the list reads fine without it;
* anything else untraced (an identifier, a figure) may be a paraphrase of
  something true, so it is marked in place (``（未核实）`` /
  `` (unverified)``), in list items as in single text fields
  (``summary``, ``judgement_reason``, ``insights.*``): dropping it would
  lose what may be right, and rewriting the sentence is not ours to do.

Prose is never judged: only tokens that *look* checkable are extracted, and
the extraction errs towards not extracting (a bare ``encoder/decoder`` or
``Llama-3-70B`` is left alone). Support, in turn, errs towards accepting (a
number anywhere in the diff supports the same number in the answer), so a
marker means "this is nowhere in the change", not "this is probably wrong".

Everything is deterministic and regex-based; patterns are compiled once and
the per-evidence number index is cached, so checking an answer costs a few
scans of the diff text.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from repoherald.i18n import CATALOGUES, LANGUAGES, t
from repoherald.llm.schema import FullAnswer, LlmInsights, LlmRisk, ShortAnswer, max_length

__all__ = ["Claim", "Evidence", "Unsupported", "audit", "check", "markers"]


@dataclass(frozen=True)
class Evidence:
    """What an answer may refer to, all of it from git data and the rule facts.

    ``paths`` holds every path and old path of the commit; ``text`` is the
    commit message plus the diff text the tool has (identifiers must occur
    there); ``numbers_text`` is ``text`` plus the rule facts' own figures
    (file counts, ``+added/−deleted``), so the model may repeat them.
    """

    paths: frozenset[str]
    text: str
    numbers_text: str


@dataclass(frozen=True)
class Unsupported:
    """One claim that could not be traced to the evidence, and what was done to it.

    ``field`` names where it was, with list indices as in the model's answer
    (``impact[2]``, ``risks[0].detail``, ``insights.performance``); ``kind``
    is ``"path"``, ``"identifier"`` or ``"number"``; ``action`` is
    ``"marked"`` (kept with a visible marker, or replaced by the marker when
    the field had no room) or ``"removed"`` (its list item was dropped, or,
    as a last resort, the token was deleted from a full field).
    """

    field: str
    claim: str
    kind: str
    action: str


def markers(lang: str) -> tuple[str, str]:
    """The marker appended after a claim in ``lang``, and the marker-only form
    that replaces a claim when appending would exceed the field's max_length."""
    return t(lang, "llm.unverified_marker"), t(lang, "llm.unverified_marker_only")


# -- token patterns ----------------------------------------------------------
#
# Character classes are spelled out in ASCII on purpose: Python's ``\w`` and
# ``\b`` treat CJK as word characters, and Chinese answers glue code to
# prose ("修改了eagle.py中的"), so ``\b`` would find no boundary there.

_URL = re.compile(r"(?:https?|ftp)://[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]+|www\.[A-Za-z0-9\-.]+")
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_CVE = re.compile(r"(?<![A-Za-z0-9])CVE-\d{4}-\d{4,7}(?![0-9])", re.IGNORECASE)

_KNOWN_EXT = frozenset(
    {"py", "pyi", "pyx", "pxd", "cu", "cuh", "cc", "cpp", "cxx", "c", "h", "hpp", "hh", "hxx"}
    | {"rs", "go", "ts", "tsx", "js", "jsx", "mjs", "cjs", "java", "kt", "scala", "rb", "php"}
    | {"swift", "cs", "sql", "html", "css", "sh", "bash", "cmake", "proto", "ipynb", "lock"}
    | {"md", "rst", "txt", "yaml", "yml", "toml", "json", "cfg", "ini"}
)
_EXTENSIONLESS_FILES = frozenset(
    {"Dockerfile", "Makefile", "LICENSE", "CODEOWNERS", "Jenkinsfile", "Containerfile"}
)
# A path-like run; a trailing ``:12``, ``:12:3`` or ``#L12-L20`` line reference
# is swallowed with it (not checked: hunk headers rarely contain the exact
# line a model cites, so checking it would mark true statements).
_PATH_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9_.\-/:@])[A-Za-z0-9_.\-/]*[A-Za-z0-9_/]"
    r"(?P<line>(?::\d+){1,2}|#L\d+(?:-L?\d+)?)?"
)
_FILE_LIKE = re.compile(r"^[A-Za-z0-9_.\-]*[A-Za-z0-9_\-]\.([A-Za-z][A-Za-z0-9_]{0,15})$")
_HAS_LETTER = re.compile(r"[A-Za-z]")

# Prose words that look dotted but are not code.
_PROSE_DOTTED = frozenset(
    {"Node.js", "Vue.js", "Next.js", "Nuxt.js", "React.js", "Express.js", "D3.js", "Three.js"}
    | {"ASP.NET", "VB.NET", "e.g", "i.e", "E.g", "I.e", "Ph.D", "a.k.a"}
)

# Numbers. NUM is a grouped or plain numeral with an optional fraction.
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"


def _words(key: str) -> str:
    """The catalogues' alternatives for ``key``, every language's (``|`` first when any)."""
    found = "|".join(w for lang in LANGUAGES if (w := CATALOGUES[lang][key]))
    return "|" + found if found else ""


_RANGE_SEP = rf"\s*(?:-|–|—|~|～{_words('factcheck.range')})\s*"
_PERCENT_WORDS = rf"%|％{_words('factcheck.percent')}"
_PERCENT_UNIT = rf"\s*(?:{_PERCENT_WORDS})"
_MULT_UNIT = rf"(?:[xX](?![A-Za-z0-9_])|\s*(?:×{_words('factcheck.multiplier')}))"
_PERCENT = re.compile(
    rf"(?<![\d.])(?P<a>{_NUM})(?:{_RANGE_SEP}(?P<b>{_NUM}))?{_PERCENT_UNIT}", re.IGNORECASE
)
_MULTIPLIER = re.compile(rf"(?<![\d.])(?P<a>{_NUM})(?:{_RANGE_SEP}(?P<b>{_NUM}))?{_MULT_UNIT}")
_EVIDENCE_MULTIPLIER = re.compile(
    rf"(?<![\d.])(?P<a>{_NUM})(?:{_RANGE_SEP}(?P<b>{_NUM}))?"
    rf"(?:[xX](?![A-Za-z0-9_])|\s*(?:×{_words('factcheck.multiplier_evidence')}))",
    re.IGNORECASE,
)
_MEASURE = re.compile(
    rf"(?<![\d.])(?P<a>{_NUM})(?:{_RANGE_SEP}(?P<b>{_NUM}))?\s*"
    r"(?:ms|µs|us|ns|s|[KMGT]i?B|tokens?/s|tok/s|it/s|req/s|QPS|"
    rf"[GT]FLOPS{_words('factcheck.time')})(?![A-Za-z0-9_/])"
)
"""A figure with a unit of measure (``30 ms``, ``2.5 GB``, ``1200 tokens/s``): a claim."""
_PERCENT_SIGN = re.compile(_PERCENT_WORDS, re.IGNORECASE)
_MULTIPLIER_SIGN = re.compile(
    rf"\d[xX](?![A-Za-z0-9_])|×{_words('factcheck.multiplier_evidence')}", re.IGNORECASE
)
_UNIT_WINDOW = 64
_WINDOWED_MAX = 2000
_VERSION = re.compile(
    r"(?<![0-9_.])(?:(?<![A-Za-z])[vV])?(?P<core>\d+(?:\.\d+){2,})"
    r"(?P<suffix>[-.+]?(?:rc|alpha|beta|dev|post|a|b)\d*)?(?![A-Za-z0-9_]|\.\d)"
    r"|(?<![A-Za-z0-9_.])[vV](?P<core2>\d+\.\d+)(?![\d]|\.\d)"
)
_DECIMAL = re.compile(r"(?<![\d.])(?:\d{1,3}(?:,\d{3})+|\d+)\.\d+(?![\d]|\.\d)")
_INTEGER = re.compile(r"(?<![\d.])(?:\d{1,3}(?:,\d{3})+|\d+)(?![\d]|\.\d)")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")

# Dotted (``torch.compile``), call-like (``foo()``) and snake_case tokens.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9_.\-/])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?"
    r"(?![A-Za-z0-9_])"
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GENERAL_NAMES = frozenset(dir(builtins)) | {"CancelledError", "KeyboardInterrupt"}
"""Python's own names (``bool``, ``TypeError``): what a change raises or returns is named
with them whether or not the diff spells them out, so they are not claims about it."""

# Evidence-side scanners: deliberately lenient (digits inside identifiers count).
_EVIDENCE_DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d])|\d+")
_EVIDENCE_DOTTED = re.compile(r"(?<![\d.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)+")

_MASK = "\x00"


# -- claims ------------------------------------------------------------------


@dataclass(frozen=True)
class _Claim:
    """One checkable token in a text: where it is, where a marker goes, and its verdict."""

    start: int  # span replaced by the marker-only form (includes backticks/quotes)
    end: int
    insert_at: int  # where the appended marker goes
    token: str
    kind: str
    supported: bool


_CJK_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8}
_CJK_DIGITS |= {"九": 9, "十": 10}
_WORD_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_WORD_NUMBERS |= {"nine": 9, "ten": 10}
_CJK_MULTIPLIER = re.compile(rf"([{''.join(_CJK_DIGITS)}])\s*倍|(翻倍|翻番)")
_WORD_MULTIPLIER = re.compile(
    rf"(?<![A-Za-z])(?:({'|'.join(_WORD_NUMBERS)})[\s-]*(?:times|fold)\b|(twice|doubles?|doubled)\b"
    r"|(triples?|tripled)\b)",
    re.IGNORECASE,
)


def _worded_multipliers(text: str) -> set[str]:
    """Multipliers written in words: ``两倍``, ``翻倍``, ``two times``, ``twice``, ``tripled``.

    A model that reads "两倍" in the message and writes "2x" repeats it.
    """
    out: set[str] = set()
    for m in _CJK_MULTIPLIER.finditer(text):
        out.add(str(_CJK_DIGITS[m.group(1)]) if m.group(1) else "2")
    for m in _WORD_MULTIPLIER.finditer(text):
        if m.group(1):
            out.add(str(_WORD_NUMBERS[m.group(1).lower()]))
        else:
            out.add("2" if m.group(2) else "3")
    return out


def _scaled(numeral: str, by: int) -> str:
    """``numeral`` multiplied by ``by`` (``Decimal``, exact), canonical: 0.5 x 100 -> 50."""
    try:
        return format((Decimal(numeral.replace(",", "")) * by).normalize(), "f")
    except InvalidOperation:  # pragma: no cover - the regexes only feed numerals
        return numeral


@dataclass(frozen=True)
class _NumberIndex:
    """The figures of ``numbers_text``, normalised once per evidence."""

    numbers: frozenset[str]  # every digit run and grouped numeral, canonical
    dotted: frozenset[str]  # dotted numerals, literal, with their component prefixes
    percents: frozenset[str]
    multipliers: frozenset[str]
    lower: str


def _canon(numeral: str) -> str:
    """Canonical decimal form: ``1,000`` -> ``1000``, ``1.50`` -> ``1.5``, ``007`` -> ``7``."""
    raw = numeral.replace(",", "")
    if raw.isdigit():
        return raw.lstrip("0") or "0"
    try:
        return format(Decimal(raw).normalize(), "f")
    except InvalidOperation:  # pragma: no cover - the regexes only feed numerals
        return raw


def _endpoints(match: re.Match[str]) -> list[str]:
    return [_canon(v) for v in (match.group("a"), match.group("b")) if v]


def _unit_values(pattern: re.Pattern[str], sign: re.Pattern[str], text: str) -> set[str]:
    """Endpoints of every ``pattern`` match, scanning only just before each unit sign.

    Running the range-aware pattern at every digit of a multi-megabyte diff
    is the slow part of indexing; units are usually rare, so a literal scan
    for them and a short window before each is several times faster. A
    window starts at most ``_UNIT_WINDOW`` characters back (lookbehinds
    still see the text before it), which no real "1,000.5 - 2,000.5 %"
    exceeds. Text dense with units is scanned whole instead.
    """
    signs = [u.span() for u in sign.finditer(text)]
    raws: set[tuple[str, str | None]] = set()
    if len(signs) > _WINDOWED_MAX:
        raws.update((m.group("a"), m.group("b")) for m in pattern.finditer(text))
    else:
        last = 0
        for u_start, u_end in signs:
            window = pattern.finditer(text, max(last, u_start - _UNIT_WINDOW), u_end)
            raws.update((m.group("a"), m.group("b")) for m in window)
            last = u_end
    return {_canon(v) for pair in raws for v in pair if v}


@lru_cache(maxsize=4)
def _number_index(numbers_text: str) -> _NumberIndex:
    """Index every figure of the evidence once; answers are checked against sets."""
    # Deduplicate raw tokens first: a large diff repeats the same few numerals.
    numbers: set[str] = set()
    for raw in set(_EVIDENCE_DIGITS.findall(numbers_text)):
        numbers.add(_canon(raw))
        if "," in raw:  # "f(10,200)" is two numbers as much as ten thousand two hundred
            numbers.update(_canon(part) for part in raw.split(","))
    dotted: set[str] = set()
    for raw in set(_EVIDENCE_DOTTED.findall(numbers_text)):
        parts = raw.replace(",", "").split(".")
        for n in range(2, len(parts) + 1):
            dotted.add(".".join(parts[:n]))
        if len(parts) == 2:
            dotted.add(_canon(raw))
    percents = _unit_values(_PERCENT, _PERCENT_SIGN, numbers_text)
    multipliers = _unit_values(_EVIDENCE_MULTIPLIER, _MULTIPLIER_SIGN, numbers_text)
    multipliers |= _worded_multipliers(numbers_text)
    return _NumberIndex(
        frozenset(numbers),
        frozenset(dotted),
        frozenset(percents),
        frozenset(multipliers),
        numbers_text.lower(),
    )


class _Checker:
    """Extracts and judges the claims of one text against one evidence."""

    def __init__(self, evidence: Evidence) -> None:
        self._ev = evidence
        self._num = _number_index(evidence.numbers_text)
        self._paths = tuple(p.lstrip("/") for p in evidence.paths if p)
        self._slashed = tuple("/" + p for p in self._paths)

    # -- support -------------------------------------------------------------

    def _path_supported(self, token: str) -> bool:
        """Equal to a changed path, a ``/``-boundary suffix of one, or a directory in one.

        A directory may be any run of whole segments (``spec_decode/``), not
        only a prefix: that is how a reader names it. A ``a/``/``b/`` prefix
        copied from a diff header is tolerated.
        """
        p = token.lstrip("/")
        if p.startswith("./"):
            p = p[2:]
        if not p:
            return True
        if p.startswith(("a/", "b/")) and self._path_supported(p[2:]):
            return True
        if p.endswith("/") or not _is_file_like(p.rsplit("/", 1)[-1]):
            needle = "/" + p.rstrip("/") + "/"
            return any(needle in s for s in self._slashed)
        needle = "/" + p
        return any(s.endswith(needle) for s in self._slashed)

    def _path_anywhere(self, token: str) -> bool:
        """A changed path, or a path the message or diff writes out (a file a comment,
        an import or a config names): neither is an invention.

        ``docs/CN/.../args.rst`` is a pattern: any changed path it matches
        supports it. ``EagleProposer.load/prepare`` lists names, each of which
        must be supported.
        """
        if self._path_supported(token):
            return True
        if _ELIDED.search(token):
            pattern = _elided_pattern(token.lstrip("/"))
            return any(pattern.search(p) for p in self._paths)
        segments = [seg for seg in token.split("/") if seg]
        if (
            segments
            and not any(_is_file_like(seg) for seg in segments)
            and all(
                self._identifier_supported(seg) if "." in seg else _has_word(self._ev.text, seg)
                for seg in segments
            )
        ):
            return True  # names or words joined by slashes (``try/finally``, a route)
        p = token.lstrip("/")
        if p.startswith("./"):
            p = p[2:]
        return bool(p) and _path_in_text(self._ev.text, p)

    def _identifier_supported(self, token: str) -> bool:
        """In the text verbatim, a module path of a changed file, or every dotted part in the text.

        ``numbers_text`` counts as text too: it is the text plus the rule
        facts, and a model repeating a rule fact (an area name) repeats
        something true. The last rule accepts ``EagleProposer.propose`` when
        the diff has ``class EagleProposer`` and ``def propose`` but never
        the dotted form, which is how code reads; an invented method is
        still caught.
        """
        ident = token[:-2] if token.endswith("()") else token
        if not ident or ident in _GENERAL_NAMES or _DUNDER.fullmatch(ident):
            return True
        ev = self._ev
        if ident in ev.text or ident in ev.numbers_text:
            return True
        if any(ident in p for p in self._paths):
            return True
        if "." in ident and " " not in ident:
            if any(ident.replace(".", "/") in p for p in self._paths):
                return True
            parts = ident.split(".")
            if all(_NAME.fullmatch(part) for part in parts):
                return all(_has_word(ev.text, part) for part in parts)
        return False

    def _other_form(self, pattern: re.Pattern[str], value: str) -> bool:
        """A percentage written as a fraction in the evidence (50% and 0.5), or the
        reverse; a multiplier written as a plain number in a ``times`` phrase is
        already in the index."""
        if pattern is not _PERCENT:
            return False
        fraction = format((Decimal(value) / 100).normalize(), "f")
        return fraction in self._num.dotted or fraction in self._num.numbers

    def _version_supported(self, core: str, suffix: str | None, token: str) -> bool:
        """The dotted core occurs (or is a component prefix of a version that does).

        ``2.5`` is supported by ``torch==2.5.1``; a suffix such as ``rc1``
        must then occur verbatim too.
        """
        if core not in self._num.dotted and not self._same_minor(core):
            return False
        if not suffix:
            return True
        literal = token.lower().lstrip("v")
        return (
            re.search(rf"(?<![\d.]){re.escape(literal)}(?![A-Za-z0-9])", self._num.lower)
            is not None
        )

    def _same_minor(self, core: str) -> bool:
        """``0.11.0`` beside ``0.11.1``: a boundary of the same minor release the change
        names ("0.10.1 to 0.11.0 are excluded"), not an invented version."""
        parts = core.split(".")
        if len(parts) < 3:
            return False
        minor = ".".join(parts[:2]) + "."
        return any(v.startswith(minor) for v in self._num.dotted)

    # -- extraction ----------------------------------------------------------

    def claims(self, text: str) -> list[_Claim]:
        """All checkable tokens of ``text``, in order, non-overlapping.

        Stages run from the most specific token to the least, and each masks
        what it consumed, so a number inside a path or version is not checked
        a second time as a bare number.
        """
        work = list(text)
        found: list[_Claim] = []

        def take(start: int, end: int) -> None:
            for i in range(start, end):
                work[i] = _MASK

        def masked() -> str:
            return "".join(work)

        # URLs are neither paths nor claims.
        for m in _URL.finditer(text):
            end = m.end()
            while end > m.start() and text[end - 1] in ".,;:!?)]'":
                end -= 1
            take(m.start(), end)

        for m in _CODE_SPAN.finditer(masked()):
            content = text[m.start(1) : m.end(1)].strip()
            if not content or _MASK in m.group(1):
                continue
            take(m.start(), m.end())
            claim = self._code_claim(content, m.start(), m.end())
            if claim is not None:
                found.append(claim)

        for m in _CVE.finditer(masked()):
            token = m.group()
            ok = token.lower() in self._num.lower
            found.append(self._bare(text, m.start(), m.end(), token, "number", ok))
            take(m.start(), m.end())

        for m in _PATH_CANDIDATE.finditer(masked()):
            start, end = m.start(), m.end()
            line = m.group("line")
            path_end = end - len(line) if line else end
            token = text[start:path_end]
            if text.startswith("(", end) or not _looks_like_path(token):
                continue
            found.append(self._bare(text, start, end, token, "path", self._path_anywhere(token)))
            take(start, end)

        for m in _VERSION.finditer(masked()):
            core = m.group("core") or m.group("core2")
            ok = self._version_supported(core, m.group("suffix"), m.group())
            found.append(self._bare(text, m.start(), m.end(), m.group(), "number", ok))
            take(m.start(), m.end())

        for m in _IDENTIFIER.finditer(masked()):
            token = m.group()
            bare = token[:-2] if token.endswith("()") else token
            if not _is_code_like(token, bare):
                continue
            ok = self._identifier_supported(token)
            found.append(self._bare(text, m.start(), m.end(), token, "identifier", ok))
            take(m.start(), m.end())

        self._numbers(text, work, found, take)
        found.sort(key=lambda c: c.start)
        return found

    def _numbers(
        self,
        text: str,
        work: list[str],
        found: list[_Claim],
        take: Callable[[int, int], None],
    ) -> None:
        """Percentages and multipliers (with ranges), then decimals, then 2+ digit integers."""
        unit_sets = (
            (_PERCENT, self._num.percents),
            (_MULTIPLIER, self._num.multipliers),
            (_MEASURE, self._num.numbers | self._num.dotted),
        )
        for pattern, known in unit_sets:
            for m in pattern.finditer("".join(work)):
                if _inside_identifier(work, m.start()):
                    continue
                ok = all(v in known or self._other_form(pattern, v) for v in _endpoints(m))
                token = m.group().strip()
                found.append(self._bare(text, m.start(), m.end(), token, "number", ok))
                take(m.start(), m.end())
        # Bare counts, codes, dates and decimals are not checked: measured on
        # recorded answers, 16 of 17 such numbers the check flagged were true
        # (a hunk's line count, an HTTP status, a boundary version), so a
        # marker on them said the opposite of the truth.

    def _code_claim(self, content: str, start: int, end: int) -> _Claim | None:
        """A backtick span: a path, a figure, or else an identifier that must occur verbatim."""
        if _URL.fullmatch(content):
            return None
        if (
            " " not in content
            and _HAS_LETTER.search(content)
            and ("/" in content or _looks_like_path(content))
        ):
            # ``vllm/v1`` or ``owner/repo`` in code is not file-like; the
            # diff text then counts too, so a quoted import path passes.
            ok = self._path_anywhere(content) or (
                not _is_file_like(content.rsplit("/", 1)[-1]) and content in self._ev.text
            )
            return _Claim(start, end, end, content, "path", ok)
        version = _VERSION.fullmatch(content)
        if version is not None:
            core = version.group("core") or version.group("core2")
            ok = self._version_supported(core, version.group("suffix"), content)
            return _Claim(start, end, end, content, "number", ok)
        if _DECIMAL.fullmatch(content) or _INTEGER.fullmatch(content):
            return None  # a bare figure: not checked (see ``_numbers``)
        ok = self._identifier_supported(content) or self._expression_supported(content)
        return _Claim(start, end, end, content, "identifier", ok)

    def _expression_supported(self, content: str) -> bool:
        """An expression (``self.sampler.sample(logits)``, ``cfg.x = True``) whose every
        name is supported: the model quoted code in its own spacing or arguments."""
        if not _EXPRESSION_CHARS.search(content):
            return False
        names = [n for n in _DOTTED_NAME.findall(content) if n not in _LITERALS]
        return bool(names) and all(self._identifier_supported(n) for n in names)

    @staticmethod
    def _bare(text: str, start: int, end: int, token: str, kind: str, ok: bool) -> _Claim:
        """A claim outside backticks; a marker goes after a closing quote that wraps it."""
        insert_at = end
        if (
            end < len(text)
            and start > 0
            and text[end] in _CLOSE_QUOTES
            and text[start - 1] in _OPEN_QUOTES
        ):
            insert_at = end + 1
        return _Claim(start, end, insert_at, token, kind, ok)


_DUNDER = re.compile(r"__[A-Za-z0-9_]+__")
_EXPRESSION_CHARS = re.compile(r"[()\[\]=,\s:+*<>!-]")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_LITERALS = frozenset({"True", "False", "None", "true", "false", "null", "and", "or", "not"})


_ELIDED = re.compile(r"(?:^|/)(?:\.\.\.|…)(?:/|$)")


def _elided_pattern(token: str) -> re.Pattern[str]:
    """``a/.../b.py`` as a regular expression over changed paths (``...`` spans segments)."""
    parts = [re.escape(p) for p in re.split(r"(?:\.\.\.|…)", token)]
    return re.compile("(?:^|/)" + ".*".join(parts) + "$")


def _path_in_text(text: str, path: str) -> bool:
    """``path`` written out in ``text`` as a whole path (not the tail of a longer name)."""
    return re.search(rf"(?<![A-Za-z0-9_.\-]){re.escape(path)}(?![A-Za-z0-9_])", text) is not None


_OPEN_QUOTES = frozenset("\"'“‘「『《")
_CLOSE_QUOTES = frozenset("\"'”’」』》")


def _is_file_like(name: str) -> bool:
    """``eagle.py``, ``CMakeLists.txt``, ``Dockerfile``: a name with an extension."""
    if name in _EXTENSIONLESS_FILES:
        return True
    return _FILE_LIKE.match(name) is not None


def _looks_like_path(token: str) -> bool:
    """Paths worth checking; ``and/or``, ``+120/-30`` and ``1.5/2.0`` are not."""
    if token in _PROSE_DOTTED or not _HAS_LETTER.search(token):
        return False
    last = token.rstrip("/").rsplit("/", 1)[-1]
    if "/" in token:
        if token.endswith("/"):
            return True  # a directory: "vllm/v1/"
        return _is_file_like(last)
    m = _FILE_LIKE.match(token)
    return m is not None and m.group(1).lower() in _KNOWN_EXT


def _is_code_like(token: str, bare: str) -> bool:
    """Dotted, call-like, dunder or snake_case; ``e.g`` and ``sm_90`` are not code."""
    if bare in _PROSE_DOTTED:
        return False
    if token.endswith("()"):
        return True
    if "." in bare:
        return any(len(part) > 1 for part in bare.split("."))
    if bare.startswith("__"):
        return True
    # snake_case names (``block_size``) are code; ``sm_90`` and ``x86_64`` name hardware.
    inner = bare.strip("_")
    return "_" in inner and all(part[:1].isalpha() for part in inner.split("_") if part)


def _inside_identifier(work: list[str], start: int) -> bool:
    """Whether a numeral continues a word (``H100``, ``Llama-3-70B``, ``sm_90``).

    Walks back over identifier characters; meeting a letter or underscore
    means the digits are part of a name, not a figure. ``10-20ms`` and
    ``+120/-30`` stay figures.
    """
    i = start - 1
    while i >= 0 and work[i] in _IDENT_CHARS:
        ch = work[i]
        if ch.isalpha() or ch == "_":
            return True
        i -= 1
    return False


@lru_cache(maxsize=1024)
def _word_pattern(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])")


def _has_word(text: str, word: str) -> bool:
    return _word_pattern(word).search(text) is not None


# -- applying the verdicts -----------------------------------------------------


def _clearly_false(claim: _Claim) -> bool:
    """A file path or CVE id found nowhere in the commit: an invention, not a paraphrase.

    Only these remove a list item; an unmatched identifier or figure may be a
    paraphrase of something true, so it is marked and kept. A path counts
    only with a directory and a file name (``vllm/v1/core.py``): a bare
    ``config.json`` may name a file outside the change, ``docs/.../x.rst``
    is a pattern, and ``/v1/completions`` is a route, not a file.
    """
    if _CVE.fullmatch(claim.token) is not None:
        return True
    token = claim.token
    return (
        claim.kind == "path"
        and "/" in token.strip("/")
        and not token.startswith("/")
        and not _ELIDED.search(token)
        and _is_file_like(token.rsplit("/", 1)[-1])
    )


def _mark(text: str, claims: list[_Claim], lang: str, limit: int | None) -> tuple[str, str]:
    """Mark unsupported claims in place, never exceeding ``limit``; returns (text, action).

    First choice appends the marker after each claim. If that overflows the
    field, each claim is replaced by the marker-only form instead; if even
    that overflows (claims shorter than the marker in a full field), the
    claims are deleted and reported as removed. Nothing else is ever cut.
    """
    append, replace = markers(lang)
    bad = [c for c in claims if not c.supported]
    if not bad:
        return text, "marked"

    out: list[str] = []
    pos = 0
    for c in bad:
        out.append(text[pos : c.insert_at])
        out.append(append)
        pos = c.insert_at
    out.append(text[pos:])
    marked = "".join(out)
    if limit is None or len(marked) <= limit:
        return marked, "marked"

    def substitute(by: str) -> str:
        parts: list[str] = []
        p = 0
        for c in bad:
            parts.append(text[p : c.start])
            parts.append(by)
            p = c.end
        parts.append(text[p:])
        return "".join(parts)

    replaced = substitute(replace)
    if len(replaced) <= limit:
        return replaced, "marked"
    return substitute(""), "removed"


def _texts_of(obj: Any) -> Iterable[tuple[str, str]]:
    """(sub-field, text) pairs of a risk dict, in schema order."""
    for key in ("risk", "detail", "mitigation"):
        yield key, obj[key]


def check(
    answer: ShortAnswer | FullAnswer, evidence: Evidence, lang: str
) -> tuple[ShortAnswer | FullAnswer, list[Unsupported]]:
    """Return a new answer of the same type with unsupported claims handled, and the list.

    List items (``impact``, ``recommendations``, a whole risk) holding a
    clearly false claim (a path or CVE id found nowhere) are removed; other
    unsupported claims, in list items and single text fields, are marked in place
    with the ``lang`` marker (``zh`` -> ``（未核实）``, anything else ->
    `` (unverified)``). The list is in field order (judgement_reason,
    summary, impact, insights, risks, recommendations), then by position.
    The result is re-validated, so it always satisfies the schema.
    """
    checker = _Checker(evidence)
    model = type(answer)
    data = answer.model_dump()
    found: list[Unsupported] = []

    def single(field: str, text: str, owner: type[BaseModel], name: str) -> str:
        claims = checker.claims(text)
        new_text, action = _mark(text, claims, lang, max_length(owner, name))
        found.extend(Unsupported(field, c.token, c.kind, action) for c in claims if not c.supported)
        return new_text

    def item(field: str, text: str, limit: int | None) -> tuple[str | None, list[Unsupported]]:
        """One list item (or risk sub-field): None when a claim in it is clearly false,
        else the text with its other unsupported claims marked."""
        claims = checker.claims(text)
        bad = [c for c in claims if not c.supported]
        if any(_clearly_false(c) for c in bad):
            return None, [Unsupported(field, c.token, c.kind, "removed") for c in bad]
        new_text, action = _mark(text, claims, lang, limit)
        return new_text, [Unsupported(field, c.token, c.kind, action) for c in bad]

    for name in ("judgement_reason", "summary"):
        data[name] = single(name, data[name], model, name)

    if isinstance(answer, FullAnswer):
        for name in ("impact", "recommendations"):
            kept: list[str] = []
            for i, text in enumerate(data[name]):
                new, bad = item(f"{name}[{i}]", text, None)
                found.extend(bad)
                if new is not None:
                    kept.append(new)
            data[name] = kept

        for name in LlmInsights.model_fields:
            data["insights"][name] = single(
                f"insights.{name}", data["insights"][name], LlmInsights, name
            )

        kept_risks: list[dict[str, Any]] = []
        for i, risk in enumerate(data["risks"]):
            checked = {
                key: item(f"risks[{i}].{key}", text, max_length(LlmRisk, key))
                for key, text in _texts_of(risk)
            }
            if any(new is None for new, _ in checked.values()):
                found.extend(
                    replace(u, action="removed") for _, bad in checked.values() for u in bad
                )
                continue
            found.extend(u for _, bad in checked.values() for u in bad)
            kept_risks.append({key: new for key, (new, _) in checked.items()})
        data["risks"] = kept_risks

    return model.model_validate(data), found


@dataclass(frozen=True)
class Claim:
    """One checkable token of an answer and whether the evidence supports it (for audits)."""

    field: str
    text: str
    """The whole text the token sits in."""
    claim: str
    kind: str
    supported: bool


def audit(answer: ShortAnswer | FullAnswer, evidence: Evidence) -> list[Claim]:
    """Every claim :func:`check` extracts from ``answer``, supported or not, in field order.

    :func:`check` reports only what it marked or removed; measuring it also
    needs what it let through, which is this list's supported claims.
    """
    checker = _Checker(evidence)
    data = answer.model_dump()
    texts: list[tuple[str, str]] = [(n, data[n]) for n in ("judgement_reason", "summary")]
    if isinstance(answer, FullAnswer):
        for name in ("impact", "recommendations"):
            texts.extend((f"{name}[{i}]", text) for i, text in enumerate(data[name]))
        texts.extend((f"insights.{n}", data["insights"][n]) for n in LlmInsights.model_fields)
        for i, risk in enumerate(data["risks"]):
            texts.extend((f"risks[{i}].{key}", text) for key, text in _texts_of(risk))
    return [
        Claim(field, text, c.token, c.kind, c.supported)
        for field, text in texts
        for c in checker.claims(text)
    ]
