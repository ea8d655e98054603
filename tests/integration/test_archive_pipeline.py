"""The pipeline writes through the archive publisher: names, languages, identities, index, links."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from repoherald.config import build_settings
from repoherald.errors import ConfigError, PublishError
from repoherald.pipeline import run
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture, run_repoherald

DAY = "2025-06-10"


def make_repo(path: Path, title: str = "feat: app (#7)") -> GitFixture:
    fx = GitFixture.init(path)
    fx.write("README.md", "# proj\n")
    fx.commit("Initial commit", when=datetime(2025, 6, 9, 9, tzinfo=UTC))
    fx.write("src/app.py", "def app():\n    pass\n")
    fx.commit(title, when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    return fx


def report(tmp_path: Path, repo: Path, **kw: str) -> list[Path]:
    settings = build_settings(
        repos=(str(repo),), day=DAY, tz="UTC", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, **kw,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    return result.written


def config_with_template(tmp_path: Path, template: str) -> Path:
    escaped = template.replace("\\", "\\\\").replace('"', '\\"').replace("\x00", "\\u0000")
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text(
        f'[report]\npath = "{escaped}"\n\n[[repos]]\nsource = "proj"\n', encoding="utf-8"
    )
    return cfg


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{name.__class__}/{date}", "field {name.__class__} is not allowed"),
        ("{unknown}/{date}", "field {unknown} is not allowed"),
        ("{", "unbalanced brace"),
        ("{year}\x00/{date}", "control character"),
        ("{year}/{name}", "must contain {date}"),
    ],
)
def test_bad_path_templates_are_config_errors(tmp_path: Path, template: str, says: str) -> None:
    cfg = config_with_template(tmp_path, template)
    with pytest.raises(ConfigError) as err:
        build_settings(config=str(cfg), cwd=tmp_path, home=str(tmp_path / "home"))
    assert err.value.exit_code == 2
    assert str(err.value).startswith(f"config file {cfg}: report.path: ")
    assert says in str(err.value)


def test_bad_template_exits_2_before_any_work(tmp_path: Path) -> None:
    make_repo(tmp_path / "proj")
    config_with_template(tmp_path, "{year}/{name.__class__}/{date}")
    proc = run_repoherald("report", "--date", DAY, "--home", str(tmp_path / "home"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(
        f"repoherald: error: config file {tmp_path / 'repoherald.toml'}: report.path:"
        " the path template field {name.__class__} is not allowed:"
        " use {year}, {month}, {day}, {date}, {name}"
    )
    assert not (tmp_path / "reports").exists() and not (tmp_path / "home").exists()


def test_a_template_ending_in_the_name_keeps_dotted_names_apart(tmp_path: Path) -> None:
    for name in ("vue.js", "vue.ts"):
        make_repo(tmp_path / name, f"feat: {name}")
    (tmp_path / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\npath = "{year}/{date}-{name}"\n', encoding="utf-8"
    )
    written = {}
    for name in ("vue.js", "vue.ts"):
        settings = build_settings(
            repos=(str(tmp_path / name),), day=DAY, cwd=tmp_path, home=str(tmp_path / "home")
        )
        (md, _) = run(settings).written
        written[name] = md
    assert written["vue.js"].name == f"{DAY}-vue.js.md"
    assert written["vue.ts"].name == f"{DAY}-vue.ts.md"
    for name, md in written.items():
        assert f"feat: {name}" in md.read_text(encoding="utf-8")


def test_english_and_chinese_reports_of_a_day_are_two_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj").path
    zh_md, zh_js = report(tmp_path, repo)
    en_md, en_js = report(tmp_path, repo, lang="en")
    assert zh_md.name == f"{DAY}.md" and en_md.name == f"{DAY}.en.md"
    assert en_js.name == f"{DAY}.en.json"
    assert "每日更新报告" in zh_md.read_text(encoding="utf-8")
    assert "Daily update report" in en_md.read_text(encoding="utf-8")
    assert json.loads(zh_js.read_text(encoding="utf-8"))["lang"] == "zh"


def test_two_repositories_with_one_name_do_not_overwrite_each_other(tmp_path: Path) -> None:
    first = make_repo(tmp_path / "a" / "proj", "feat: first").path
    second = make_repo(tmp_path / "b" / "proj", "feat: second").path
    md, js = report(tmp_path, first)
    assert json.loads(js.read_text(encoding="utf-8"))["repos"][0]["source_id"] == str(first)
    before = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    settings = build_settings(
        repos=(str(second),), day=DAY, tz="UTC", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    with pytest.raises(PublishError) as err:
        run(settings)
    assert "set `name` for one of them" in str(err.value)
    assert {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == before
    # The advice works: with its own name the second one gets its own folder.
    md2, _ = report(tmp_path, second, name="proj-b")
    assert md2.parent.name == "proj-b" and "feat: second" in md2.read_text(encoding="utf-8")
    assert "feat: first" in md.read_text(encoding="utf-8")


def test_cli_clash_is_one_line_exit_1(tmp_path: Path) -> None:
    first = make_repo(tmp_path / "a" / "proj").path
    second = make_repo(tmp_path / "b" / "proj").path
    args = ("--date", DAY, "--tz", "UTC", "--home", str(tmp_path / "home"))
    assert run_repoherald("report", "--repo", str(first), *args, cwd=tmp_path).returncode == 0
    proc = run_repoherald("report", "--repo", str(second), *args, cwd=tmp_path)
    assert proc.returncode == 1
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("repoherald: error:")]
    assert len(errors) == 1 and "set `name`" in errors[0] and "Traceback" not in proc.stderr


def test_index_links_the_reports_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj").path
    md, _ = report(tmp_path, repo)
    report(tmp_path, repo, lang="en")
    out = tmp_path / "out"
    tokens = (
        MarkdownIt("commonmark")
        .enable("table")
        .parse((out / "index.md").read_text(encoding="utf-8"))
    )
    links = [
        unquote(str(c.attrs["href"]))
        for t in tokens
        if t.type == "inline"
        for c in t.children or []
        if c.type == "link_open"
    ]
    assert md.relative_to(out).as_posix() in links
    assert len(links) == 4 and all((out / link).is_file() for link in links)
    entries = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert [(e["commits"], e["lang"]) for e in entries] == [(1, "en"), (1, "zh")]


def test_without_a_web_url_the_report_says_how_to_get_links(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj").path
    zh_md, _ = report(tmp_path, repo)
    en_md, _ = report(tmp_path, repo, lang="en")
    zh, en = zh_md.read_text(encoding="utf-8"), en_md.read_text(encoding="utf-8")
    assert zh.count("`web_url`") == 1 and "没有链接" in zh
    assert en.count("`web_url`") == 1 and "turn them into links" in en
    linked, _ = report(tmp_path / "w", repo, web_url="https://github.com/org/proj")
    text = linked.read_text(encoding="utf-8")
    assert "`web_url`" not in text and "https://github.com/org/proj/pull/7" in text


def test_index_follows_the_report_language(tmp_path: Path) -> None:
    """index.md is worded in the configured language; file names keep zh untagged."""
    repo = make_repo(tmp_path / "proj").path
    (en_md, _) = report(tmp_path, repo, lang="en")
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert index.startswith("# Report index\n") and "| Date | Repository |" in index
    assert "报告索引" not in index and "日期" not in index
    assert en_md.name == f"{DAY}.en.md"
    report(tmp_path, repo)  # a zh run rewrites the index in Chinese
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert index.startswith("# 报告索引\n") and "Report index" not in index


def test_a_day_that_cannot_be_written_fails_the_run_and_is_not_recorded(tmp_path: Path) -> None:
    """The days before it are in place, listed and recorded; the store's newest day (where
    the service catches up from) is the last one written, so the failed day is tried again."""
    repo = make_repo(tmp_path / "proj")
    for day in (11, 12):
        repo.write("src/app.py", f"def app():\n    return {day}\n")
        repo.commit(f"fix: day {day}", when=datetime(2025, 6, day, 9, tzinfo=UTC))
    out = tmp_path / "out"
    blocked = out / "2025" / "proj" / "2025-06-11.md"
    blocked.mkdir(parents=True)  # a directory where the second day's report should go
    settings = build_settings(
        repos=(str(repo.path),), since=DAY, until="2025-06-12", tz="UTC", out=str(out),
        home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    with pytest.raises(PublishError) as err:
        run(settings)
    assert str(blocked) in str(err.value)
    assert (out / "2025" / "proj" / f"{DAY}.md").is_file()
    assert not (out / "2025" / "proj" / "2025-06-12.md").exists()
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))["reports"]
    assert [e["date"] for e in index] == [DAY]
    with Store.open(tmp_path / "home" / "repoherald.db") as store:
        assert store.latest_report_day("proj") == date(2025, 6, 10)
    blocked.rmdir()
    assert run(settings).ok
    with Store.open(tmp_path / "home" / "repoherald.db") as store:
        assert store.latest_report_day("proj") == date(2025, 6, 12)
