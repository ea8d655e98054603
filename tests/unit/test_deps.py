"""Behaviour of manifest detection and dependency diffing, one format at a time."""

from __future__ import annotations

import warnings
from textwrap import dedent

import pytest

from repoherald.analysis.facts.deps import dependency_changes, is_manifest
from repoherald.models import DependencyChange


def changes(
    path: str, old: str | None, new: str | None
) -> list[tuple[str, str | None, str | None]]:
    """(name, old, new) triples, with the manifest checked once."""
    result = dependency_changes(
        path, dedent(old) if old is not None else None, dedent(new) if new is not None else None
    )
    assert all(c.manifest == path for c in result)
    return [(c.name, c.old, c.new) for c in result]


# --- is_manifest ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "requirements.txt",
        "requirements-dev.txt",
        "services/api/requirements_test.txt",
        "requirements/base.txt",
        "deep/requirements/prod.txt",
        "constraints.txt",
        "constraints-py311.txt",
        "requirements.in",
        "pyproject.toml",
        "sub/pkg/setup.py",
        "setup.cfg",
        "Pipfile",
        "web/package.json",
        "Cargo.toml",
        "crates/core/Cargo.toml",
        "go.mod",
        "environment.yml",
        "poetry.lock",
        "package-lock.json",
        "uv.lock",
        "Cargo.lock",
        "go.sum",
        "yarn.lock",
        "Pipfile.lock",
    ],
)
def test_is_manifest(path: str) -> None:
    assert is_manifest(path)


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "docs/requirements.md",
        "requirements.py",
        "src/setup.pyc",
        "notes/requirements-overview.rst",
        "tools/config.toml",
        "package.jsonc",
        "go.mod.bak",
        "other/base.txt",
        "mysetup.py",
    ],
)
def test_is_not_manifest(path: str) -> None:
    assert not is_manifest(path)


@pytest.mark.parametrize(
    "path", ["poetry.lock", "package-lock.json", "uv.lock", "Cargo.lock", "go.sum"]
)
def test_lock_files_are_not_itemised(path: str) -> None:
    assert dependency_changes(path, "a 1\n", "a 2\n") == []


def test_unknown_file_gives_nothing() -> None:
    assert dependency_changes("README.md", "requests==1\n", "requests==2\n") == []


# --- requirements ---------------------------------------------------------------------------


def test_requirements_changes_sorted_with_added_and_removed() -> None:
    old = """
        requests==2.30.0
        Django>=4.2,<5
        six
        flask==2.0  # pinned for a reason
    """
    new = """
        # comment line
        requests==2.31.0
        django >= 4.2, < 6
        flask==2.0
        attrs
        -r base.txt
        -c constraints.txt
        --index-url https://example.org/simple
    """
    assert changes("requirements.txt", old, new) == [
        ("attrs", None, ""),
        ("django", ">=4.2,<5", ">=4.2,<6"),
        ("requests", "==2.30.0", "==2.31.0"),
        ("six", "", None),
    ]


def test_requirements_result_objects() -> None:
    assert dependency_changes("requirements.txt", "a==1\n", "a==2\n") == [
        DependencyChange("requirements.txt", "a", "==1", "==2")
    ]


def test_requirements_names_are_pep503_normalised_and_shown_as_in_new_file() -> None:
    assert changes("requirements.txt", "Zope.Interface==5\n", "zope_interface==6\n") == [
        ("zope_interface", "==5", "==6")
    ]
    assert changes("requirements.txt", "Foo_Bar==1\n", "foo-bar == 1\n") == []


def test_requirements_extras_markers_and_urls() -> None:
    old = """
        requests[socks]==2.31
        tomli>=1; python_version < "3.11"
        pkg @ https://example.org/pkg-1.0.tar.gz
    """
    new = """
        requests[socks, security]==2.31
        tomli>=2; python_version<"3.11"
        pkg @ https://example.org/pkg-2.0.tar.gz ; sys_platform == "linux"
    """
    assert changes("requirements.txt", old, new) == [
        (
            "pkg",
            "@ https://example.org/pkg-1.0.tar.gz",
            '@ https://example.org/pkg-2.0.tar.gz; sys_platform == "linux"',
        ),
        ("requests", "[socks]==2.31", "[socks,security]==2.31"),
        ("tomli", '>=1; python_version < "3.11"', '>=2; python_version<"3.11"'),
    ]


def test_requirements_pip_compile_hashes_and_continuations() -> None:
    old = """
        certifi==2024.2.2 \\
            --hash=sha256:aaaa \\
            --hash=sha256:bbbb
            # via requests
    """
    new = """
        certifi==2024.7.4 \\
            --hash=sha256:cccc
            # via requests
    """
    assert changes("requirements.txt", old, new) == [("certifi", "==2024.2.2", "==2024.7.4")]


def test_requirements_skip_urls_paths_and_editables() -> None:
    text = """
        -e .
        -e git+https://github.com/org/repo.git#egg=repo
        ./local/package
        https://example.org/wheel-1.0-py3-none-any.whl
        git+https://github.com/org/other.git
        real==1
    """
    assert changes("requirements/dev.txt", None, text) == [("real", None, "==1")]


def test_requirements_duplicate_names_with_markers_are_joined() -> None:
    new = """
        numpy==1.24; python_version < "3.9"
        numpy==1.26; python_version >= "3.9"
    """
    assert changes("requirements.txt", None, new) == [
        ("numpy", None, '==1.24; python_version < "3.9" | ==1.26; python_version >= "3.9"')
    ]


def test_unchanged_and_reformatted_files_give_nothing() -> None:
    text = "requests==2.31\nflask\n"
    assert dependency_changes("requirements.txt", text, text) == []
    assert changes("requirements.txt", text, "# sorted\nflask\nrequests == 2.31\n") == []


def test_added_and_deleted_manifest() -> None:
    assert changes("constraints.txt", None, "a==1\nb\n") == [("a", None, "==1"), ("b", None, "")]
    assert changes("constraints.txt", "a==1\n", None) == [("a", "==1", None)]
    assert dependency_changes("constraints.txt", None, None) == []


# --- pyproject.toml -------------------------------------------------------------------------


def test_pyproject_pep621_optional_and_build_system() -> None:
    old = """
        [build-system]
        requires = ["setuptools>=68", "wheel"]

        [project]
        name = "x"
        dependencies = ["httpx>=0.27", "rich"]

        [project.optional-dependencies]
        test = ["pytest>=8.0"]
    """
    new = """
        [build-system]
        requires = ["setuptools>=69", "wheel"]

        [project]
        name = "x"
        dependencies = ["httpx>=0.28", "rich", "pytest>=8.0"]

        [project.optional-dependencies]
        test = ["pytest>=8.0", "hypothesis"]

        [dependency-groups]
        lint = ["ruff==0.6.0", {include-group = "test"}]
    """
    assert changes("pyproject.toml", old, new) == [
        ("httpx", ">=0.27", ">=0.28"),
        ("hypothesis (extra: test)", None, ""),
        ("pytest", None, ">=8.0"),
        ("ruff (group: lint)", None, "==0.6.0"),
        ("setuptools (build-system)", ">=68", ">=69"),
    ]


def test_pyproject_poetry() -> None:
    old = """
        [tool.poetry.dependencies]
        python = "^3.10"
        requests = "^2.30"
        black = {version = "^23.0", optional = true}
        mylib = {git = "https://github.com/org/mylib.git", tag = "v1"}

        [tool.poetry.dev-dependencies]
        pytest = "*"
    """
    new = """
        [tool.poetry.dependencies]
        python = "^3.11"
        Requests = "^2.31"
        black = {version = "^24.0", optional = true}
        mylib = {git = "https://github.com/org/mylib.git", tag = "v2"}
        local = {path = "../local", develop = true}

        [tool.poetry.group.dev.dependencies]
        pytest = "^8"
    """
    assert changes("pyproject.toml", old, new) == [
        ("Requests", "^2.30", "^2.31"),
        ("black", "^23.0", "^24.0"),
        ("local", None, "path ../local"),
        (
            "mylib",
            "git https://github.com/org/mylib.git@v1",
            "git https://github.com/org/mylib.git@v2",
        ),
        ("pytest (group: dev)", "", "^8"),
        ("python", "^3.10", "^3.11"),
    ]


def test_pyproject_without_dependencies_and_unchanged() -> None:
    text = '[tool.ruff]\nline-length = 100\n[project]\nname = "x"\n'
    assert dependency_changes("pyproject.toml", text, text.replace("100", "120")) == []


@pytest.mark.parametrize(
    "bad",
    [
        "[project\ndependencies = [",
        '[project]\ndependencies = "requests"\n',
        "[project]\noptional-dependencies = 3\n",
        "project = 1\n",
    ],
)
def test_pyproject_malformed_gives_nothing(bad: str) -> None:
    good = '[project]\ndependencies = ["requests==2"]\n'
    assert dependency_changes("pyproject.toml", good, bad) == []
    assert dependency_changes("pyproject.toml", bad, good) == []
    assert dependency_changes("pyproject.toml", None, bad) == []


# --- setup.py / setup.cfg -------------------------------------------------------------------


def test_setup_py_literals_and_module_constants() -> None:
    old = """
        from setuptools import setup
        REQUIRES = ["click>=8.0", "jinja2"]
        setup(
            name="x",
            install_requires=REQUIRES,
            extras_require={"test": ["pytest>=7"]},
        )
    """
    new = """
        import setuptools
        REQUIRES = ["click>=8.1", "jinja2", "rich"]
        setuptools.setup(
            name="x",
            install_requires=REQUIRES,
            setup_requires=("wheel",),
            extras_require={"test": ["pytest>=8"], "docs": compute()},
        )
    """
    assert changes("setup.py", old, new) == [
        ("click", ">=8.0", ">=8.1"),
        ("pytest (extra: test)", ">=7", ">=8"),
        ("rich", None, ""),
        ("wheel (setup_requires)", None, ""),
    ]


def test_setup_py_with_tokenizer_warnings_still_parses() -> None:
    new = 'import re\nPAT = re.compile("\\d")\nsetup(install_requires=["a==1"])\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert changes("setup.py", None, new) == [("a", None, "==1")]


def test_setup_py_computed_requirements_are_ignored() -> None:
    new = "from setuptools import setup\nsetup(install_requires=open('r.txt').read().split())\n"
    assert changes("setup.py", None, new) == []


@pytest.mark.parametrize(
    "bad",
    [
        "setup(install_requires=[\n",
        "setup(install_requires=['a'])\x00\n",
        "x = " + "-" * 100_000 + "1\n",
    ],
)
def test_setup_py_malformed_gives_nothing(bad: str) -> None:
    assert dependency_changes("setup.py", "setup(install_requires=['a==1'])\n", bad) == []


def test_setup_cfg() -> None:
    old = """
        [metadata]
        name = x

        [options]
        install_requires =
            requests>=2.30
            importlib-metadata; python_version < "3.8"

        [options.extras_require]
        test =
            pytest
    """
    new = """
        [metadata]
        name = x

        [options]
        install_requires =
            requests>=2.31
            importlib-metadata; python_version < "3.8"
        setup_requires = setuptools_scm

        [options.extras_require]
        test =
            pytest>=8
    """
    assert changes("setup.cfg", old, new) == [
        ("pytest (extra: test)", "", ">=8"),
        ("requests", ">=2.30", ">=2.31"),
        ("setuptools_scm (setup_requires)", None, ""),
    ]


def test_setup_cfg_malformed_gives_nothing() -> None:
    good = "[options]\ninstall_requires = a==1\n"
    assert dependency_changes("setup.cfg", good, "no section header = 1\n") == []


# --- Pipfile ----------------------------------------------------------------------------------


def test_pipfile() -> None:
    old = """
        [packages]
        requests = "*"
        django = {version = "==4.2", extras = ["bcrypt"]}

        [dev-packages]
        pytest = "==7.4"
    """
    new = """
        [packages]
        requests = "==2.31"
        django = {version = "==5.0", extras = ["bcrypt"]}

        [dev-packages]
        pytest = "==8.0"
    """
    assert changes("Pipfile", old, new) == [
        ("django", "[bcrypt]==4.2", "[bcrypt]==5.0"),
        ("pytest (dev-packages)", "==7.4", "==8.0"),
        ("requests", "", "==2.31"),
    ]


# --- package.json -----------------------------------------------------------------------------


def test_package_json() -> None:
    old = """
        {
          "name": "web",
          "dependencies": {"react": "^18.2.0", "lodash": "4.17.21"},
          "devDependencies": {"typescript": "~5.3.0"},
          "scripts": {"build": "tsc"}
        }
    """
    new = """
        {
          "name": "web",
          "dependencies": {"react": "^18.3.0", "@scope/pkg": "*"},
          "devDependencies": {"typescript": "~5.3.0", "eslint": "^9"},
          "peerDependencies": {"react-dom": ">=18"}
        }
    """
    assert changes("package.json", old, new) == [
        ("@scope/pkg", None, ""),
        ("eslint (devDependencies)", None, "^9"),
        ("lodash", "4.17.21", None),
        ("react", "^18.2.0", "^18.3.0"),
        ("react-dom (peerDependencies)", None, ">=18"),
    ]


@pytest.mark.parametrize(
    "bad",
    [
        '{"dependencies": {"react": "^18"',
        "[1, 2, 3]",
        '{"dependencies": ["react"]}',
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_package_json_malformed_gives_nothing(bad: str) -> None:
    good = '{"dependencies": {"react": "^18"}}'
    assert dependency_changes("package.json", good, bad) == []


# --- Cargo.toml -------------------------------------------------------------------------------


def test_cargo_toml() -> None:
    old = """
        [package]
        name = "x"
        version = "0.1.0"

        [dependencies]
        serde = { version = "1.0", features = ["derive"] }
        regex = "1.9"
        local = { path = "../local" }

        [dev-dependencies]
        criterion = "0.4"

        [target.'cfg(windows)'.dependencies]
        winapi = "0.3.8"
    """
    new = """
        [package]
        name = "x"
        version = "0.2.0"

        [dependencies]
        serde = { version = "1.0.200", features = ["derive"] }
        regex = "1.9"
        tokio = { workspace = true }

        [dependencies.anyhow]
        version = "1"

        [dev-dependencies]
        criterion = "0.5"

        [target.'cfg(windows)'.dependencies]
        winapi = "0.3.9"
    """
    assert changes("Cargo.toml", old, new) == [
        ("anyhow", None, "1"),
        ("criterion (dev-dependencies)", "0.4", "0.5"),
        ("local", "path ../local", None),
        ("serde", "1.0", "1.0.200"),
        ("tokio", None, "workspace"),
        ("winapi (target.cfg(windows).dependencies)", "0.3.8", "0.3.9"),
    ]


def test_cargo_version_only_package_change_gives_nothing() -> None:
    old = '[package]\nversion = "0.1.0"\n[dependencies]\nregex = "1"\n'
    assert dependency_changes("Cargo.toml", old, old.replace("0.1.0", "0.2.0")) == []


def test_cargo_malformed_gives_nothing() -> None:
    good = '[dependencies]\nregex = "1"\n'
    assert dependency_changes("Cargo.toml", good, '[dependencies]\nregex = "2\n') == []
    assert dependency_changes("Cargo.toml", good, "dependencies = 3\n") == []


# --- go.mod -----------------------------------------------------------------------------------


def test_go_mod_single_lines_and_blocks() -> None:
    old = """
        module example.com/app

        go 1.21

        require github.com/pkg/errors v0.9.1

        require (
            golang.org/x/sync v0.5.0
            golang.org/x/text v0.14.0 // indirect
        )

        replace golang.org/x/text => ../text
    """
    new = """
        module example.com/app

        go 1.22

        require (
            golang.org/x/sync v0.6.0
            golang.org/x/text v0.14.0 // indirect
            github.com/google/uuid v1.6.0
        )

        exclude (
            golang.org/x/net v0.1.0
        )
    """
    assert changes("go.mod", old, new) == [
        ("github.com/google/uuid", None, "v1.6.0"),
        ("github.com/pkg/errors", "v0.9.1", None),
        ("golang.org/x/sync", "v0.5.0", "v0.6.0"),
    ]


def test_go_mod_malformed_gives_nothing() -> None:
    good = "module m\nrequire a.com/b v1.0.0\n"
    assert dependency_changes("go.mod", good, "module m\nrequire (\n a.com/b v1.1.0\n") == []
    assert dependency_changes("go.mod", good, "module m\nrequire a.com/b\n") == []


# --- environment.yml --------------------------------------------------------------------------


def test_environment_yml_conda_and_pip() -> None:
    old = """
        name: analysis
        channels:
          - conda-forge
        dependencies:
          - python=3.11
          - numpy>=1.24
          - conda-forge::pandas 2.1.*
          - pip
          - pip:
            - requests==2.30  # for the API
            - "rich"
        variables:
          - not-a-dependency
    """
    new = """
        name: analysis
        channels:
          - conda-forge
        dependencies:
        - python=3.12
        - numpy>=1.24
        - conda-forge::pandas 2.2.*
        - pip
        - scipy
        - pip:
          - requests==2.31
    """
    assert changes("environment.yml", old, new) == [
        ("pandas", "2.1.*", "2.2.*"),
        ("python", "=3.11", "=3.12"),
        ("requests (pip)", "==2.30", "==2.31"),
        ("rich (pip)", "", None),
        ("scipy", None, ""),
    ]


def test_environment_yml_flow_list_and_malformed() -> None:
    assert changes("environment.yml", None, "dependencies: [numpy=1.26, 'scipy']\n") == [
        ("numpy", None, "=1.26"),
        ("scipy", None, ""),
    ]
    good = "dependencies:\n  - numpy\n"
    assert dependency_changes("environment.yml", good, "dependencies: numpy\n") == []
