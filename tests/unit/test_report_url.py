"""``report_url``'s ``{suffix}``: the archive's real file names, Chinese untagged."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from repoherald.config import DEFAULT_LANG, DEFAULT_PATH_TEMPLATE
from repoherald.publish.archive.layout import UNTAGGED_LANG, lang_suffix
from repoherald.publish.archive.publisher import ArchiveOptions, ArchivePublisher
from repoherald.publish.base import Publication
from repoherald.publish.webhook.publisher import WebhookOptions
from repoherald.publish.webhook.report_url import check_report_url, report_url

DAY = date(2026, 8, 20)
TEMPLATE = "https://h.test/reports/{year}/{name}/{date}{suffix}.md"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_suffix_points_at_the_file_the_archive_writes(tmp_path: Path, lang: str) -> None:
    # As `run` builds its archive: the default main language and path template.
    archive = ArchivePublisher(ArchiveOptions(out=tmp_path, path=DEFAULT_PATH_TEMPLATE))
    md, _ = archive.paths(Publication("vllm", "", DAY, lang, "", ""))
    url = report_url(check_report_url(TEMPLATE), name="vllm", day=DAY, lang=lang)
    assert url == "https://h.test/reports/" + md.relative_to(tmp_path).as_posix()
    expected = {"zh": "2026-08-20.md", "en": "2026-08-20.en.md"}[lang]
    assert url is not None and url.endswith("/vllm/" + expected)


def test_the_untagged_language_is_the_default_one() -> None:
    assert UNTAGGED_LANG == DEFAULT_LANG
    assert (lang_suffix("zh"), lang_suffix("en")) == ("", ".en")


def test_the_option_documents_suffix() -> None:
    description = WebhookOptions.model_fields["report_url"].description or ""
    assert "{suffix}" in description and ".en" in description
    assert WebhookOptions(kind="slack", url_env="HOOK", report_url=TEMPLATE).report_url == TEMPLATE
