"""Tests for repoherald.render.slug against github-slugger's own fixtures.

The cases marked as fixtures are copied from ``test/fixtures.json`` of
https://github.com/Flet/github-slugger (the expected values there were recorded
from headings rendered on github.com).  The repoherald-specific cases were checked
against github-slugger 2.0.0 running in Node.
"""

from __future__ import annotations

import pytest

from repoherald.render.slug import Slugger, markdown_inline_to_text, slugify

# github-slugger test/fixtures.json, in file order: upstream feeds all of them to ONE
# slugger, so the duplicate handling ("alpha-1", "echo-1-2", "foxtrot-2", ...) depends
# on this order.
SEQUENTIAL_FIXTURES: list[tuple[str, str, str]] = [
    ("Basic usage", "alpha", "alpha"),
    ("Basic usage (again)", "alpha", "alpha-1"),
    ("Camelcase", "bravoCharlieDelta", "bravocharliedelta"),
    ("Prototypal injection: proto", "__proto__", "__proto__"),
    ("Prototypal injection: proto (again)", "__proto__", "__proto__-1"),
    ("Prototypal injection: has own", "hasOwnProperty", "hasownproperty"),
    ("Repetition (1)", "echo", "echo"),
    ("Repetition (2)", "echo", "echo-1"),
    ("Repetition (3)", "echo 1", "echo-1-1"),
    ("Repetition (4)", "echo-1", "echo-1-2"),
    ("Repetition (5)", "echo", "echo-2"),
    ("More repetition (1)", "foxtrot-1", "foxtrot-1"),
    ("More repetition (2)", "foxtrot", "foxtrot"),
    ("More repetition (3)", "foxtrot", "foxtrot-2"),
    ("Characters: dash", "heading with a - dash", "heading-with-a---dash"),
    ("Characters: underscore", "heading with an _ underscore", "heading-with-an-_-underscore"),
    ("Characters: dot", "heading with a period.txt", "heading-with-a-periodtxt"),
    (
        "Characters: dots, parents, brackets",
        "exchange.bind_headers(exchange, routing [, bindCallback])",
        "exchangebind_headersexchange-routing--bindcallback",
    ),
    ("Characters: space", " ", "-"),
    ("Characters: initial space", " a", "-a"),
    ("Characters: final space", "a ", "a-"),
    ("Characters: initial and final spaces", " a ", "-a-"),
    ("Characters: initial and final dashes", "-a-", "-a--1"),
    ("Characters: apostrophe", "apostrophe’s should be trimmed", "apostrophes-should-be-trimmed"),
    ("Some more duplicates (1)", "golf", "golf"),
    ("Some more duplicates (2)", "golf", "golf-1"),
    ("Some more duplicates (3)", "golf", "golf-2"),
    ("Non-ascii: ♥", "I ♥ unicode", "i--unicode"),
    ("Non-ascii: -", "dash-dash", "dash-dash"),
    ("Non-ascii: – (en dash)", "en–dash", "endash"),
    ("Non-ascii: – (em dash)", "em–dash", "emdash"),
    ("Non-ascii: 😄", "😄 unicode emoji", "-unicode-emoji"),
    ("Non-ascii: 😄-😄", "😄-😄 unicode emoji", "--unicode-emoji"),
    ("Non-ascii: 😄_😄", "😄_😄 unicode emoji", "_-unicode-emoji"),
    ("Non-ascii: 😄 - an emoji", "😄 - an emoji", "---an-emoji"),
    ("Non-ascii: :smile:", ":smile: - a gemoji", "smile---a-gemoji"),
    ("Non-ascii: Cyrillic (1)", "Привет", "привет"),
    ("Non-ascii: Cyrillic (2)", "Профили пользователей", "профили-пользователей"),
    ("Non-ascii: Cyrillic + Han", "Привет non-latin 你好", "привет-non-latin-你好"),
    ("Gemoji (1)", ":ok: No underscore", "ok-no-underscore"),
    ("Gemoji (2)", ":ok_hand: Single", "ok_hand-single"),
    (
        "Gemoji (3)",
        ":ok_hand::hatched_chick: Two in a row with no spaces",
        "ok_handhatched_chick-two-in-a-row-with-no-spaces",
    ),
    ("Gemoji (4)", ":ok_hand: :hatched_chick: Two in a row", "ok_hand-hatched_chick-two-in-a-row"),
]

# Per-Unicode-category fixtures from the same file (stateless: no duplicate suffix).
CATEGORY_FIXTURES: list[tuple[str, str, str]] = [
    (
        "Close_Punctuation",
        "a) ] } ༻ ༽ ᚜ ⁆ ⁾ ₎ ⌉ ⌋ 〉 ❩ ❫ ❭ ❯ ❱ ❳ ❵ ⟆ ⟧ ⟩ ⟫ ⟭ ⟯ ⦄ ⦆ ⦈ ⦊ ⦌ ⦎ ⦐ ⦒ ⦔ ⦖ ⦘ ⧙ ⧛ ⧽ "
        "⸣ ⸥ ⸧ ⸩ 〉 》 」 』 】 〕 〗 〙 〛 〞 〟 ﴾ ︘ ︶ ︸ ︺ ︼ ︾ "
        "﹀ ﹂ ﹄ ﹈ ﹚ ﹜ ﹞ ） ］ ｝ ｠ ｣b",
        "a" + "-" * 72 + "b",
    ),
    (
        "Connector_Punctuation",
        "a_ ‿ ⁀ ⁔ ︳ ︴ ﹍ ﹎ ﹏ ＿b",
        "a_-‿-⁀-⁔-︳-︴-﹍-﹎-﹏-＿b",
    ),
    (
        "Dash_Punctuation",
        "a- ֊ ־ ᐀ ᠆ ‐ ‑ ‒ – — ― ⸗ ⸚ ⸺ ⸻ ⹀ 〜 〰 ゠ ︱ ︲ ﹘ ﹣ －b",
        "a------------------------b",
    ),
    ("Final_Punctuation", "a» ’ ” › ⸃ ⸅ ⸊ ⸍ ⸝ ⸡b", "a---------b"),
    ("Initial_Punctuation", "a« ‘ ‛ “ ‟ ‹ ⸂ ⸄ ⸉ ⸌ ⸜ ⸠b", "a-----------b"),
    ("Line_Separator", "a\u2028b", "ab"),
    ("Paragraph_Separator", "a\u2029b", "ab"),
    (
        "Enclosing_Mark",
        "a\u0488 \u0489 \u1abe \u20dd \u20de \u20df \u20e0 "
        "\u20e2 \u20e3 \u20e4 \ua670 \ua671 \ua672b",
        "a\u0488-\u0489-\u1abe-\u20dd-\u20de-\u20df-\u20e0-"
        "\u20e2-\u20e3-\u20e4-\ua670-\ua671-\ua672b",
    ),
    (
        "Titlecase_Letter",
        "aǅ ǈ ǋ ǲ ᾈ ᾉ ᾊ ᾋ ᾌ ᾍ ᾎ ᾏ ᾘ ᾙ ᾚ ᾛ ᾜ ᾝ ᾞ ᾟ ᾨ ᾩ ᾪ ᾫ ᾬ ᾭ ᾮ ᾯ ᾼ ῌ ῼb",
        "aǆ-ǉ-ǌ-ǳ-ᾀ-ᾁ-ᾂ-ᾃ-ᾄ-ᾅ-ᾆ-ᾇ-ᾐ-ᾑ-ᾒ-ᾓ-ᾔ-ᾕ-ᾖ-ᾗ-ᾠ-ᾡ-ᾢ-ᾣ-ᾤ-ᾥ-ᾦ-ᾧ-ᾳ-ῃ-ῳb",
    ),
]

# "markdownOverwrite" fixtures: the Markdown GitHub was given for the space cases,
# because a heading's own leading/trailing spaces are stripped by the parser.
MARKDOWN_OVERWRITE_FIXTURES: list[tuple[str, str, str]] = [
    ("&#x20;", " ", "-"),
    ("&#x20;a", " a", "-a"),
    ("a&#x20;", "a ", "a-"),
    ("&#x20;a&#x20;", " a ", "-a-"),
]


def test_sequential_fixtures_with_one_slugger() -> None:
    slugger = Slugger()
    for name, text, expected in SEQUENTIAL_FIXTURES:
        assert slugger.slug(text) == expected, name


@pytest.mark.parametrize(("name", "text", "expected"), CATEGORY_FIXTURES)
def test_category_fixtures(name: str, text: str, expected: str) -> None:
    assert slugify(text) == expected, name


@pytest.mark.parametrize(("md", "text", "expected"), MARKDOWN_OVERWRITE_FIXTURES)
def test_markdown_overwrite_fixtures(md: str, text: str, expected: str) -> None:
    assert markdown_inline_to_text(md) == text
    assert slugify(markdown_inline_to_text(md)) == expected


def test_duplicates_and_literal_suffix_collisions() -> None:
    # github-slugger test/index.js "matching slugs" (1.x) -- still true for 2.0.0.
    slugger = Slugger()
    assert slugger.slug("foo") == "foo"
    assert slugger.slug("foo") == "foo-1"
    assert slugger.slug("foo 1") == "foo-1-1"
    assert slugger.slug("foo-1") == "foo-1-2"
    assert slugger.slug("foo") == "foo-2"
    slugger.reset()
    assert slugger.slug("foo-1") == "foo-1"
    assert slugger.slug("foo") == "foo"
    assert slugger.slug("foo") == "foo-2"


def test_reset_forgets_previous_slugs() -> None:
    slugger = Slugger()
    assert slugger.slug("Summary") == "summary"
    assert slugger.slug("Summary") == "summary-1"
    slugger.reset()
    assert slugger.slug("Summary") == "summary"


def test_empty_headings_are_deduplicated_too() -> None:
    slugger = Slugger()
    assert slugger.slug("") == ""
    assert slugger.slug("🔴") == "-1"


def test_slugify_is_stateless() -> None:
    assert slugify("foo") == "foo"
    assert slugify("foo bar") == "foo-bar"
    assert slugify("foo") == "foo"


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("🔴 高重要度变更 (4)", "-高重要度变更-4"),
        ("🟡 中重要度变更 (12)", "-中重要度变更-12"),
        ("🟢 低重要度变更 (0)", "-低重要度变更-0"),
        ("📊 统计摘要", "-统计摘要"),
        ("📋 变更详情", "-变更详情"),
        ("vllm-project/vllm", "vllm-projectvllm"),
        ("huggingface/transformers @ v4.46.0", "huggingfacetransformers--v4460"),
        ("Daily report — 2024-05-01", "daily-report--2024-05-01"),
        # Keycap/ZWJ pieces: U+200D (Format) is removed, U+FE0F (a Nonspacing_Mark) is
        # NOT, so GitHub's id keeps the invisible variation selector.
        ("⚠️ Breaking changes", "\ufe0f-breaking-changes"),
        ("👩‍💻 Contributors", "-contributors"),
        # Circled letters are Alphabetic symbols and survive (lower-cased).
        ("Ⓐ plan", "ⓐ-plan"),
    ],
)
def test_report_headings(heading: str, expected: str) -> None:
    assert slugify(heading) == expected


@pytest.mark.parametrize("emoji", ["🔴", "📊", "📋", "🟡", "🟢", "😄", "🚀", "🐛", "✅", "⭐"])
def test_emoji_are_removed(emoji: str) -> None:
    # Astral-plane emoji are surrogate pairs in github-slugger's UTF-16 regex;
    # the port must remove the whole code point, never half of it.
    assert slugify(f"a{emoji}b") == "ab"


def test_other_whitespace_is_removed_not_dashed() -> None:
    # Only U+0020 becomes "-": tab, NBSP and the ideographic space are Separators/Controls.
    assert slugify("a\tb\u00a0c\u3000d") == "abcd"


@pytest.mark.parametrize(
    ("md", "text", "slug"),
    [
        ("\\[Bugfix\\] Fix `foo` crash", "[Bugfix] Fix foo crash", "bugfix-fix-foo-crash"),
        (
            "[vllm-project/vllm](https://github.com/vllm-project/vllm)",
            "vllm-project/vllm",
            "vllm-projectvllm",
        ),
        ("[`x_y`](https://example.com/a_(b)) \\*", "x_y *", "x_y-"),
        ("Fixes &amp; features", "Fixes & features", "fixes--features"),
        ("&lt;T&gt; &#35;12 &#x1F534;", "<T> #12 🔴", "t-12-"),
        ("  padded heading \t", "padded heading", "padded-heading"),
        ("`` a`b ``", "a`b", "ab"),
        ("` `", " ", "-"),
        ("`\\[not escaped\\]`", "\\[not escaped\\]", "not-escaped"),
        ("`unclosed", "`unclosed", "unclosed"),
        ("``mismatched`", "``mismatched`", "mismatched"),
        ("\\[x\\](y)", "[x](y)", "xy"),
        ("[not a link]", "[not a link]", "not-a-link"),
        ("a\\b \\1", "a\\b \\1", "ab-1"),
        ("&foo; &amp", "&foo; &amp", "foo-amp"),
        ("&#0;", "\ufffd", ""),
    ],
)
def test_markdown_inline_to_text(md: str, text: str, slug: str) -> None:
    assert markdown_inline_to_text(md) == text
    assert slugify(markdown_inline_to_text(md)) == slug
