"""Settings precedence and validation; the store's migrations and cache keys."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.errors import ConfigError, StoreError, UsageError
from repoherald.store.db import SqliteStore as Store
from repoherald.store.migrations import MIGRATIONS
from tests.storefixture import StoreAt

NOW = datetime(2026, 3, 10, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_file_env_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(
        tmp_path / "repoherald.toml",
        '[report]\ntz = "UTC"\nlang = "en"\nout = "arch"\n\n[[repos]]\nsource = "repo"\n'
        'name = "me/repo"\n[repos.areas]\n"core" = ["src/**"]\n',
    )
    monkeypatch.delenv("REPOHERALD_TZ", raising=False)
    s = build_settings(config=str(cfg), now=NOW, cwd=tmp_path)
    assert (s.tz_name, s.lang, s.out_dir) == ("UTC", "en", tmp_path / "arch")
    assert s.repos[0].source == str(tmp_path / "repo") and s.repos[0].name == "me/repo"
    assert s.repos[0].areas == (("core", ("src/**",)),)
    assert s.selection.days == (date(2026, 3, 9),)
    monkeypatch.setenv("REPOHERALD_TZ", "Europe/Berlin")
    assert build_settings(config=str(cfg), now=NOW, cwd=tmp_path).tz_name == "Europe/Berlin"
    flagged = build_settings(config=str(cfg), tz="Asia/Tokyo", lang="zh", now=NOW, cwd=tmp_path)
    assert (flagged.tz_name, flagged.lang) == ("Asia/Tokyo", "zh")


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("REPOHERALD_TZ", "REPOHERALD_LANG"):
        monkeypatch.delenv(var, raising=False)
    s = build_settings(repos=("x",), now=NOW, cwd=tmp_path)
    assert (s.tz_name, s.lang) == ("Asia/Shanghai", "zh")
    assert s.selection.days == (date(2026, 3, 9),), "yesterday in Shanghai"
    r = build_settings(repos=("x",), since="2026-02-27", until="2026-03-02", now=NOW, cwd=tmp_path)
    assert [d.day for d in r.selection.days] == [27, 28, 1, 2]
    assert build_settings(repos=("x",), day="latest", cwd=tmp_path).selection.latest


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[report\n", "not valid TOML"),
        ('[report]\ntimezone = "UTC"\n', "report.timezone"),
        ('[[repos]]\nsource = "x"\nbrnach = "main"\n', "repos.0.brnach"),
        ('[[repos]]\nsource = "x"\nweb_url = "javascript:alert(1)"\n', "web_url"),
        ('[report]\npath = "{year}/{name}"\n', "{date}"),
    ],
)
def test_bad_config_names_the_problem(tmp_path: Path, text: str, needle: str) -> None:
    cfg = write(tmp_path / "bad.toml", text)
    with pytest.raises(ConfigError) as err:
        build_settings(config=str(cfg), repos=("x",), cwd=tmp_path)
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"day": "2026-13-45"}, "invalid date"),
        ({"day": "tomorrow-ish"}, "malformed date"),
        ({"tz": "Mars/Olympus"}, "unknown time zone"),
        ({"day": "2026-01-01", "since": "2026-01-01"}, "cannot be combined"),
        ({"since": "2026-02-01", "until": "2026-01-01"}, "before"),
        ({"lang": "fr"}, "unknown language"),
    ],
)
def test_bad_flags(tmp_path: Path, kwargs: dict[str, str], needle: str) -> None:
    with pytest.raises(UsageError) as err:
        build_settings(repos=("x",), cwd=tmp_path, **kwargs)
    assert needle in str(err.value)


def test_no_repository_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--repo"):
        build_settings(cwd=tmp_path)


def test_migrations_run_once_and_are_numbered(store_at: StoreAt) -> None:
    with store_at.open() as store:
        rows = store.conn.execute("SELECT version, name FROM schema_migrations").fetchall()
        assert [tuple(r) for r in rows] == [(n, name) for n, name, _ in MIGRATIONS]
        assert store.migrate() == []
    with store_at.open() as store:
        assert store.migrate() == []
    numbers = [n for n, _, _ in MIGRATIONS]
    assert numbers == list(range(1, len(numbers) + 1)), "append-only, numbered from 1"


def test_newer_schema_is_refused(store_at: StoreAt) -> None:
    store_at.open().close()
    store_at.sql("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    with pytest.raises(StoreError, match="newer repoherald") as caught:
        store_at.open()
    assert "\n" not in str(caught.value) and "schema 999" in str(caught.value)


def test_garbage_file_is_refused(tmp_path: Path) -> None:
    db = write(tmp_path / "s.db", "this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"only a cache: move .* aside"):
        Store.open(db)
