"""Which dependencies a commit added, removed or re-pinned, per manifest.

"Bumped httpx to 0.28" is one of the most useful lines in a daily report and
one of the least visible in a diff, so this reads the manifest formats teams
actually use — pip requirements, pyproject.toml (PEP 621, PEP 735, Poetry),
setup.py / setup.cfg, Pipfile, package.json, Cargo.toml, go.mod and conda's
environment.yml — and compares the declared version specs before and after.

Everything is pure text in, data out, with the standard library only; the
YAML subset of environment.yml is read by hand rather than pulling in PyYAML.
A side that cannot be parsed makes the whole comparison empty rather than
wrong: reporting every dependency as removed because of a stray comma would
be worse than reporting nothing.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from repoherald.analysis.pyapi.parse import parse_quietly
from repoherald.models import DependencyChange

_Deps = dict[tuple[str, str], tuple[str, str]]
"""(section, normalised name) -> (name as written, version spec)."""

_LOCKFILES = frozenset(
    {
        "poetry.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "uv.lock",
        "pdm.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "go.sum",
        "bun.lockb",
    }
)
"""Generated files: they count as dependency changes but are not itemised,
because a single bump rewrites hundreds of transitive entries."""
_LOCKFILES_LOWER = frozenset(n.lower() for n in _LOCKFILES)


class _MalformedError(Exception):
    """A manifest that cannot be read the way its format requires."""


_PARSE_ERRORS = (
    _MalformedError,
    tomllib.TOMLDecodeError,
    json.JSONDecodeError,
    configparser.Error,
    RecursionError,  # absurdly nested JSON or TOML; our own code never recurses
)


def is_lockfile(path: str) -> bool:
    """True for generated lock files (``poetry.lock``, ``go.sum``, any ``*.lock``…)."""
    name = PurePosixPath(path).name
    return name in _LOCKFILES or name.lower() in _LOCKFILES_LOWER or name.endswith(".lock")


def is_declarative(path: str) -> bool:
    """True for manifests read one by one as data, so that "no dependency changed" is certain.

    Not lock files, and not ``setup.py``: its requirements may be computed.
    """
    kind = _kind(path)
    return kind in _PARSERS and kind != "setup.py"


def is_manifest(path: str) -> bool:
    """True for files that declare dependencies, lock files included.

    Matching is by file name alone (any directory), so a monorepo's
    ``services/api/requirements.txt`` counts as much as the root one.
    """
    return _kind(path) is not None


def dependency_changes(path: str, old: str | None, new: str | None) -> list[DependencyChange]:
    """Dependencies of manifest ``path`` whose version spec changed.

    ``old`` / ``new`` are the file's text before and after the commit; None
    means the file did not exist, so every dependency of the other side is
    reported as added (``old=None``) or removed (``new=None``). Names match
    across versions case- and separator-insensitively for Python (PEP 503)
    and are shown as written in the new file (the old one for removals).
    Dependencies outside the main section carry it in parentheses, e.g.
    ``pytest (extra: test)`` or ``eslint (devDependencies)``, so that moving a
    package between sections is visible. An unpinned dependency has spec
    ``""``. Lock files, unknown files and malformed input give ``[]``.
    The result is sorted by (manifest, name).
    """
    kind = _kind(path)
    parser = _PARSERS.get(kind or "")
    if parser is None or old == new:
        return []
    try:
        before = parser(old) if old is not None else {}
        after = parser(new) if new is not None else {}
    except _PARSE_ERRORS:
        return []
    changes: list[DependencyChange] = []
    for key in before.keys() | after.keys():
        was = before.get(key)
        now = after.get(key)
        if was is not None and now is not None and was[1] == now[1]:
            continue
        shown = now[0] if now is not None else was[0] if was is not None else key[1]
        name = f"{shown} ({key[0]})" if key[0] else shown
        old_spec = was[1] if was is not None else None
        new_spec = now[1] if now is not None else None
        changes.append(DependencyChange(path, name, old_spec, new_spec))
    changes.sort(key=lambda c: (c.manifest, c.name))
    return changes


def _kind(path: str) -> str | None:
    """Which format ``path`` is in, ``"lock"`` for lock files, None otherwise."""
    pure = PurePosixPath(path)
    name = pure.name
    if name in _LOCKFILES:
        return "lock"
    lower = name.lower()
    if lower.endswith((".txt", ".in")) and (  # .in: pip-tools input (vLLM uses both)
        lower.startswith(("requirements", "constraints")) or pure.parent.name == "requirements"
    ):
        return "requirements"
    return _BY_NAME.get(name)


_BY_NAME = {
    "pyproject.toml": "pyproject",
    "setup.py": "setup.py",
    "setup.cfg": "setup.cfg",
    "Pipfile": "pipfile",
    "package.json": "npm",
    "Cargo.toml": "cargo",
    "go.mod": "go",
    "environment.yml": "conda",
    "environment.yaml": "conda",
}


# --- shared helpers -------------------------------------------------------------------------


def _pep503(name: str) -> str:
    """PEP 503 normal form, so ``Foo_Bar`` and ``foo-bar`` are the same package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _add(deps: _Deps, section: str, name: str, spec: str, key: str | None = None) -> None:
    """Record one dependency; repeats in a section (per-marker pins) are joined."""
    slot = (section, _pep503(name) if key is None else key)
    if slot in deps:
        spec = f"{deps[slot][1]} | {spec}"
    deps[slot] = (name, spec)


def _table(container: object, key: str) -> dict[str, object]:
    """``container[key]`` as a table (empty if absent); malformed if not a table."""
    if not isinstance(container, dict):
        raise _MalformedError(key)
    value = container.get(key, {})
    if not isinstance(value, dict):
        raise _MalformedError(key)
    return value


def _list(container: dict[str, object], key: str) -> list[object]:
    """``container[key]`` as an array (empty if absent); malformed if not an array."""
    value = container.get(key, [])
    if not isinstance(value, list):
        raise _MalformedError(key)
    return value


# --- PEP 508 / pip requirements -------------------------------------------------------------

_NAME_RE = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*")
_CLAUSE_RE = re.compile(r"\s*(~=|===|==|!=|<=|>=|<|>)\s*([A-Za-z0-9*+!._-]+)\s*")
_PIP_OPTION_RE = re.compile(r"(?:^|\s)-{1,2}[A-Za-z]")
_COMMENT_RE = re.compile(r"(?:^|\s)#.*$")


def _parse_requirement(text: str) -> tuple[str, str] | None:
    """(name, spec) of a PEP 508 string, or None for anything else (URLs, paths).

    The spec keeps extras and markers — ``[socks]>=2; python_version < "3.12"``
    — because changing either changes what gets installed; whitespace inside
    version clauses is dropped so reformatting is not reported as a change.
    """
    match = _NAME_RE.match(text)
    if match is None:
        return None
    name, extras = match.group(1), match.group(2)
    rest = text[match.end() :]
    marker = ""
    extras_text = ""
    if extras is not None:
        items = [e.strip() for e in extras.split(",") if e.strip()]
        extras_text = f"[{','.join(items)}]" if items else ""
    if rest.startswith("@"):
        url, _, marker = rest[1:].strip().partition(" ;")
        url = url.strip()
        if not url or any(ch.isspace() for ch in url):
            return None
        core = f"{extras_text} @ {url}".strip()
    else:
        version, _, marker = rest.partition(";")
        version = version.strip()
        if version.startswith("(") and version.endswith(")"):
            version = version[1:-1]
        clauses: list[str] = []
        if version.strip():
            for clause in version.split(","):
                clause_match = _CLAUSE_RE.fullmatch(clause)
                if clause_match is None:
                    return None
                clauses.append(clause_match.group(1) + clause_match.group(2))
        core = extras_text + ",".join(clauses)
    marker = " ".join(marker.split())
    return name, f"{core}; {marker}" if marker else core


def _add_requirements(deps: _Deps, section: str, lines: Iterable[object]) -> None:
    """Add every parseable PEP 508 string of ``lines``; others are skipped."""
    for line in lines:
        if isinstance(line, str) and (parsed := _parse_requirement(line)) is not None:
            _add(deps, section, *parsed)


def _requirements(text: str) -> _Deps:
    """pip requirements / constraints files.

    Options (``-r``, ``-c``, ``-e``, ``--index-url``, per-line ``--hash``) and
    bare URLs or paths are skipped: they name no version we could compare.
    """
    deps: _Deps = {}
    logical = re.sub(r"\\\r?\n", " ", text)
    for raw in logical.splitlines():
        line = _COMMENT_RE.sub("", raw)
        option = _PIP_OPTION_RE.search(line)
        if option is not None:
            line = line[: option.start()]
        if line.strip():
            _add_requirements(deps, "", [line])
    return deps


# --- TOML: pyproject.toml, Pipfile, Cargo.toml ----------------------------------------------


def _toml_spec(value: object) -> str | None:
    """Spec of a Poetry / Pipfile / Cargo entry: a string, or a table with a source.

    ``"*"`` is how these formats write "any version", so it becomes ``""``.
    Tables without a version name their source (``git …@rev``, ``path …``)
    so switching a dependency to a fork or a local checkout still shows up.
    """
    if isinstance(value, str):
        return "" if value.strip() == "*" else value.strip()
    if isinstance(value, list):
        specs = [s for s in (_toml_spec(v) for v in value) if s is not None]
        return " | ".join(specs)
    if not isinstance(value, dict):
        return None
    version = value.get("version")
    if isinstance(version, str):
        spec = "" if version.strip() == "*" else version.strip()
    elif isinstance(value.get("git"), str):
        ref = next((value[k] for k in ("rev", "tag", "branch", "ref") if k in value), None)
        spec = f"git {value['git']}" + (f"@{ref}" if isinstance(ref, str) else "")
    elif value.get("workspace") is True:
        spec = "workspace"
    else:
        source = next((k for k in ("path", "url", "file") if isinstance(value.get(k), str)), None)
        spec = f"{source} {value[source]}" if source else ""
    extras = value.get("extras")
    if isinstance(extras, list) and extras:
        spec = f"[{','.join(str(e) for e in extras)}]{spec}"
    for condition in ("markers", "python"):
        if isinstance(value.get(condition), str):
            label = "" if condition == "markers" else "python "
            spec += f"; {label}{value[condition]}"
    return spec


def _add_toml_table(
    deps: _Deps, section: str, table: dict[str, object], python: bool = True
) -> None:
    """Add a name -> spec table (Poetry, Pipfile, Cargo)."""
    for name, value in table.items():
        spec = _toml_spec(value)
        if spec is not None:
            _add(deps, section, name, spec, key=None if python else name)


def _pyproject(text: str) -> _Deps:
    """PEP 621 ``[project]``, ``[build-system]``, PEP 735 groups and Poetry tables."""
    data = tomllib.loads(text)
    deps: _Deps = {}
    project = _table(data, "project")
    _add_requirements(deps, "", _list(project, "dependencies"))
    for extra, items in _table(project, "optional-dependencies").items():
        if not isinstance(items, list):
            raise _MalformedError(extra)
        _add_requirements(deps, f"extra: {extra}", items)
    _add_requirements(deps, "build-system", _list(_table(data, "build-system"), "requires"))
    for group, items in _table(data, "dependency-groups").items():
        if not isinstance(items, list):
            raise _MalformedError(group)
        _add_requirements(deps, f"group: {group}", items)  # skips {include-group = …}
    poetry = _table(_table(data, "tool"), "poetry")
    _add_toml_table(deps, "", _table(poetry, "dependencies"))
    _add_toml_table(deps, "group: dev", _table(poetry, "dev-dependencies"))
    for group, body in _table(poetry, "group").items():
        _add_toml_table(deps, f"group: {group}", _table(body, "dependencies"))
    return deps


def _pipfile(text: str) -> _Deps:
    """Pipenv's ``[packages]`` and ``[dev-packages]``."""
    data = tomllib.loads(text)
    deps: _Deps = {}
    _add_toml_table(deps, "", _table(data, "packages"))
    _add_toml_table(deps, "dev-packages", _table(data, "dev-packages"))
    return deps


_CARGO_KINDS = {
    "dependencies": "",
    "dev-dependencies": "dev-dependencies",
    "dev_dependencies": "dev-dependencies",
    "build-dependencies": "build-dependencies",
    "build_dependencies": "build-dependencies",
}


def _cargo(text: str) -> _Deps:
    """Cargo's dependency tables, including workspace and per-target ones."""
    data = tomllib.loads(text)
    deps: _Deps = {}
    for kind, section in _CARGO_KINDS.items():
        _add_toml_table(deps, section, _table(data, kind), python=False)
    workspace = _table(data, "workspace")
    _add_toml_table(deps, "workspace.dependencies", _table(workspace, "dependencies"), python=False)
    for target, body in _table(data, "target").items():
        for kind in _CARGO_KINDS:
            label = f"target.{target}.{kind.replace('_', '-')}"
            _add_toml_table(deps, label, _table(body, kind), python=False)
    return deps


# --- setup.py / setup.cfg --------------------------------------------------------------------

_SETUP_KEYWORDS = {
    "install_requires": "",
    "setup_requires": "setup_requires",
    "tests_require": "tests_require",
}
"""setuptools keyword -> section label (the main one has none)."""


def _setup_py(text: str) -> _Deps:
    """String literals passed to ``setup(install_requires=…)`` and friends.

    Best effort without running the file: list/tuple literals, a single
    newline-separated string, or a module-level name bound to either are
    understood; anything computed is ignored.
    """
    try:
        tree = parse_quietly(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        # The same failure modes as in pyapi.public_api: bad syntax, NUL
        # bytes, and nesting deep enough to overflow 3.11's parser stack.
        raise _MalformedError("setup.py does not parse") from error
    constants: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                constants[target.id] = stmt.value

    def resolve(node: ast.expr) -> ast.expr:
        return constants.get(node.id, node) if isinstance(node, ast.Name) else node

    deps: _Deps = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_setup_call(node.func)):
            continue
        for keyword in node.keywords:
            if keyword.arg in _SETUP_KEYWORDS:
                section = _SETUP_KEYWORDS[keyword.arg]
                _add_requirements(deps, section, _string_items(resolve(keyword.value)))
            elif keyword.arg == "extras_require":
                extras = resolve(keyword.value)
                if isinstance(extras, ast.Dict):
                    for key, value in zip(extras.keys, extras.values, strict=True):
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            items = _string_items(resolve(value))
                            _add_requirements(deps, f"extra: {key.value}", items)
    return deps


def _is_setup_call(func: ast.expr) -> bool:
    """``setup(...)`` or ``setuptools.setup(...)``."""
    if isinstance(func, ast.Attribute):
        return func.attr == "setup"
    return isinstance(func, ast.Name) and func.id == "setup"


def _string_items(node: ast.expr) -> list[str]:
    """The string constants of a list/tuple literal, or the lines of one string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.splitlines()
    if isinstance(node, ast.List | ast.Tuple):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def _setup_cfg(text: str) -> _Deps:
    """``[options]`` requirement lists and ``[options.extras_require]``."""
    config = configparser.ConfigParser(interpolation=None, strict=False)
    config.read_string(text)
    deps: _Deps = {}
    for option, section in _SETUP_KEYWORDS.items():
        value = config.get("options", option, fallback="")
        _add_requirements(deps, section, value.splitlines())
    if config.has_section("options.extras_require"):
        for extra in config.options("options.extras_require"):
            value = config.get("options.extras_require", extra)
            _add_requirements(deps, f"extra: {extra}", value.splitlines())
    return deps


# --- package.json ------------------------------------------------------------------------------

_NPM_SECTIONS = {
    "dependencies": "",
    "devDependencies": "devDependencies",
    "peerDependencies": "peerDependencies",
    "optionalDependencies": "optionalDependencies",
}


def _package_json(text: str) -> _Deps:
    """npm's dependency objects; ``*`` and ``""`` both mean unpinned."""
    data = json.loads(text)
    deps: _Deps = {}
    for key, section in _NPM_SECTIONS.items():
        for name, spec in _table(data, key).items():
            if isinstance(spec, str):
                spec = spec.strip()
                _add(deps, section, name, "" if spec == "*" else spec, key=name)
    return deps


# --- go.mod ------------------------------------------------------------------------------------


def _go_mod(text: str) -> _Deps:
    """``require`` lines and blocks; ``// indirect`` and other directives ignored."""
    deps: _Deps = {}
    block: str | None = None
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block is not None:
            if line == ")":
                block = None
            elif block == "require":
                _add_go_requirement(deps, line.split())
            continue
        tokens = line.split()
        if len(tokens) == 2 and tokens[1] == "(":
            block = tokens[0]
        elif tokens[0] == "require":
            _add_go_requirement(deps, tokens[1:])
    if block is not None:
        raise _MalformedError("unterminated block in go.mod")
    return deps


def _add_go_requirement(deps: _Deps, tokens: list[str]) -> None:
    """``module/path v1.2.3`` (the path may be quoted)."""
    if len(tokens) != 2:
        raise _MalformedError(" ".join(tokens))
    module = tokens[0].strip('"`')
    _add(deps, "", module, tokens[1], key=module)


# --- environment.yml ---------------------------------------------------------------------------

_YAML_ITEM_RE = re.compile(r"^(\s*)-\s*(.*)$")
_CONDA_RE = re.compile(r"(?:[\w.-]+::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*([^:]*)")


def _conda(text: str) -> _Deps:
    """The ``dependencies:`` list of a conda environment, with its ``pip:`` sub-list.

    Only the YAML shapes such files use in practice are understood: block
    sequences (indented or not) and flow lists ``[a, b]``.
    """
    deps: _Deps = {}
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"dependencies\s*:", line)), None)
    if start is None:
        return deps
    inline = _strip_yaml_comment(lines[start].split(":", 1)[1]).strip()
    if inline:
        for entry in _flow_list(inline):
            _add_conda(deps, entry)
        return deps
    base: int | None = None
    in_pip = False
    for raw in lines[start + 1 :]:
        line = _strip_yaml_comment(raw)
        if not line.strip():
            continue
        item = _YAML_ITEM_RE.match(line)
        indent = len(line) - len(line.lstrip())
        if item is None:
            if indent == 0:
                break  # the next top-level key
            continue
        base = indent if base is None else base
        value = item.group(2).strip()
        if indent < base:
            break
        if indent == base:
            pip = re.fullmatch(r"pip\s*:\s*(.*)", value)
            in_pip = pip is not None
            if pip is not None and pip.group(1):
                _add_requirements(deps, "pip", _flow_list(pip.group(1)))
            elif pip is None:
                _add_conda(deps, _unquote(value))
        elif in_pip:
            _add_requirements(deps, "pip", [_unquote(value)])
    return deps


def _strip_yaml_comment(line: str) -> str:
    """Drop a ``#`` comment (YAML requires whitespace before it)."""
    return _COMMENT_RE.sub("", line)


def _unquote(value: str) -> str:
    """Remove one pair of matching YAML quotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _flow_list(value: str) -> list[str]:
    """Items of a YAML flow sequence ``[a, "b>=1"]``; malformed otherwise."""
    if not (value.startswith("[") and value.endswith("]")):
        raise _MalformedError(value)
    return [_unquote(item.strip()) for item in value[1:-1].split(",") if item.strip()]


def _add_conda(deps: _Deps, item: str) -> None:
    """``[channel::]name[ spec]``, e.g. ``numpy=1.26`` or ``conda-forge::python 3.12.*``."""
    match = _CONDA_RE.fullmatch(item.strip())
    if match is not None:
        _add(deps, "", match.group(1), " ".join(match.group(2).split()))


_PARSERS: dict[str, Callable[[str], _Deps]] = {
    "requirements": _requirements,
    "pyproject": _pyproject,
    "setup.py": _setup_py,
    "setup.cfg": _setup_cfg,
    "pipfile": _pipfile,
    "npm": _package_json,
    "cargo": _cargo,
    "go": _go_mod,
    "conda": _conda,
}
