"""Archive paths: the path template is checked up front and filled without ``str.format``."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from repoherald.errors import ConfigError
from repoherald.publish.archive.layout import check_template, fill_template, report_path

DAY = date(2026, 8, 20)
OUT = Path("/archive")


@pytest.mark.parametrize(
    "template",
    [
        "{year}/{name}/{date}",
        "{date}",
        "{year}/{month}/{day}/{name}-{date}",
        "reports {{literal}}/{date}",
        "{name}/{date}/",
    ],
)
def test_good_templates_pass(template: str) -> None:
    assert check_template(template) == template


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{name.__class__}/{date}", "{name.__class__} is not allowed"),
        ("{name[0]}/{date}", "{name[0]} is not allowed"),
        ("{unknown}/{date}", "{unknown} is not allowed"),
        ("{date!r}", "{date!r} is not allowed"),
        ("{date:>20}", "{date:>20} is not allowed"),
        ("{}/{date}", "{} is not allowed"),
        ("{0}/{date}", "{0} is not allowed"),
        ("{", "unbalanced brace"),
        ("{date}}", "unbalanced brace"),
        ("{year}/{date", "unbalanced brace"),
        ("{year}\x00/{date}", "control character"),
        ("{year}\n{date}", "control character"),
        ("{year}/{name}", "must contain {date}"),
        ("../{date}", "inside the archive"),
        ("  ", "empty"),
    ],
)
def test_bad_templates_say_why(template: str, says: str) -> None:
    with pytest.raises(ValueError) as err:
        check_template(template)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


def test_fill_template_knows_every_documented_field() -> None:
    filled = fill_template("{year}|{month}|{day}|{date}|{name}", "org/Vue.js!", date(2026, 1, 5))
    assert filled == "2026|01|05|2026-01-05|org-Vue.js"


def test_fill_template_refuses_attribute_access_even_unchecked() -> None:
    with pytest.raises(ConfigError):
        fill_template("{name.__class__.__mro__}/{date}", "x", DAY)


@pytest.mark.parametrize("template", ["{year}/{name}/{date}", "{year}/{date}-{name}", "{name}"])
def test_names_with_dots_never_share_a_file(template: str) -> None:
    if "{date}" not in template:
        template += "-{date}"
    names = ["vue.js", "vue.ts", "r.omni", "r.ascend", "vue"]
    paths = [report_path(OUT, template, n, DAY, "md") for n in names]
    assert len(set(paths)) == len(names)
    assert all(p.name.endswith(".md") for p in paths)
    twins = [report_path(OUT, template, n, DAY, "json") for n in names]
    assert [str(p)[: -len(".md")] for p in paths] == [str(p)[: -len(".json")] for p in twins]


def test_suffix_is_appended_to_the_name() -> None:
    assert report_path(OUT, "{year}/{date}-{name}", "vue.js", DAY, "md") == Path(
        "/archive/2026/2026-08-20-vue.js.md"
    )


def test_a_tagged_language_gets_its_own_file() -> None:
    zh = report_path(OUT, "{year}/{name}/{date}", "vllm", DAY, "md")
    en = report_path(OUT, "{year}/{name}/{date}", "vllm", DAY, "md", "en")
    assert zh == Path("/archive/2026/vllm/2026-08-20.md")
    assert en == Path("/archive/2026/vllm/2026-08-20.en.md")
    assert report_path(OUT, "{name}/{date}", "vllm", DAY, "json", "en").name == "2026-08-20.en.json"
