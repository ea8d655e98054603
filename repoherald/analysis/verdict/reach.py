"""Reach and public surface: how far a change travels before a downstream user feels it.

The rubric (``shared/IMPORTANCE.md``) rates by reach, not size: a thousand
lines in a prototype kernel matter less than one changed default in the
engine. These helpers read only paths, names and the title, so they hold in
any repository:

- *public* means importable by contract: a module of the project's own code,
  not under tests, benchmarks, examples, scripts, tools or a hidden
  directory, with no ``_``-prefixed module or name on the way;
- *opt-in* paths (``experimental/``, ``prototype/``, ``contrib/``…) cap a
  change at medium: only users who chose them are affected;
- a *narrow* change names one model family, one hardware generation or one
  platform in its title, or touches code only in opt-in or non-public paths;
- a *pin file* dedicated to one package (``vllm_lkg.version``,
  ``torch-commit.txt``) pins the host framework a plugin is built on.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import PurePosixPath

from repoherald.analysis.facts.commit import file_kind
from repoherald.analysis.facts.hostpins import pin_file_package
from repoherald.analysis.facts.opschema import arguments_break
from repoherald.models import ApiChange, Facts, FileStatus, OpChange

OPT_IN_DIRS = frozenset(
    {"experimental", "experiments", "prototype", "prototypes", "contrib", "sandbox", "incubator"}
)
"""Directories whose code users must opt into: a change there reaches few of them."""
NON_PUBLIC_DIRS = frozenset(
    {
        "examples", "example", "scripts", "script", "tools", "tool", "benchmarks",
        "benchmark", "bench", "tests", "test", "docs", "doc", "demo", "demos",
        "tutorials", "notebooks",
    }
)  # fmt: skip
"""Directories that hold no importable API: removing code there breaks no import."""
NATIVE_DIRS = frozenset(
    {"csrc", "third_party", "thirdparty", "3rdparty", "vendor", "vendored", "external", "extern"}
)
"""Sources built into extensions or copied from elsewhere: code users run, but no
modules they import, so a Python file deleted there removes no import path."""

MODEL_FAMILY = re.compile(
    r"\b(llama|qwen|deepseek|ds-?v\d|gemma|mistral|mixtral|glm|granite|phi-?\d|minimax|kimi|"
    r"gpt-?oss|falcon|whisper|llava|internvl|baichuan|chatglm|olmo|jamba|nemotron|"
    r"command-?r|bloom|starcoder|mamba|ernie|hunyuan|pixtral|molmo|idefics|smolvlm|"
    r"paligemma|siglip|bert|roberta|t5|sam2?)(?!(?!moe)[a-z])[\w.-]*",
    re.I,
)
"""A model family named in a title: a fix or feature for it reaches that family only."""
HARDWARE_GENERATION = re.compile(
    r"\b(blackwell|hopper|ampere|ada|volta|turing|sm_?\d{2,3}a?|[hba]100|[hb]200|gb200|"
    r"mi\d{3}x?|gfx\d{3,4}[a-z]?|gaudi\s?\d|v[4-7][ep]|v7x|trillium|ironwood|xeon|graviton|"
    r"(atlas )?(310p|910[abc]?|a[23])(?=[\s\],)]|$))\b",
    re.I,
)
"""One hardware generation named in a title."""


@lru_cache(maxsize=65536)
def _parts(path: str) -> tuple[str, ...]:
    """Lower-cased path components; cached, since the rules ask about each path several times."""
    return tuple(s.lower() for s in PurePosixPath(path).parts)


def is_public_module(path: str) -> bool:
    """True for a Python module a user imports by contract.

    Not under tests, examples, scripts, tools, benchmarks or a hidden
    directory; no ``_``-prefixed package or module (``__init__.py`` aside).
    """
    parts = _parts(path)
    if not parts or not parts[-1].endswith(".py") or file_kind(path) != "source":
        return False
    for part in parts[:-1]:
        if part in NON_PUBLIC_DIRS or part in NATIVE_DIRS or part.startswith((".", "_")):
            return False
    leaf = parts[-1]
    if leaf.removesuffix(".py") in NON_PUBLIC_DIRS:
        return False  # ``pkg/tests.py``: a module of tests, not of the API
    return leaf == "__init__.py" or not leaf.startswith("_")


def is_opt_in(path: str) -> bool:
    """True when the path lies under a directory users opt into (``prototype/``…)."""
    return any(part in OPT_IN_DIRS for part in _parts(path)[:-1])


def is_non_public(path: str) -> bool:
    """True for code outside what users install: tools, scripts, examples, hidden directories."""
    return any(p in NON_PUBLIC_DIRS or p.startswith(".") for p in _parts(path)[:-1])


def is_peripheral(path: str) -> bool:
    """True for code no default user runs: opt-in, non-public or hidden directories."""
    parts = _parts(path)[:-1]
    return is_opt_in(path) or any(p in NON_PUBLIC_DIRS or p.startswith(".") for p in parts)


def signature_breaks(old: str | None, new: str | None) -> bool:
    """True when a caller of ``old`` can fail against ``new``.

    A parameter disappears, or a new one has no default. Unparseable
    signatures count as breaking: the report would rather over-warn.
    """
    if not old or not new:
        return True
    before, after = _params(old), _params(new)
    if before is None or after is None:
        return True
    return arguments_break(before, after)


def _params(signature: str) -> dict[str, bool] | None:
    """Parameter name -> has a default (``*args``/``**kwargs`` count as defaulted)."""
    head = signature.split("->")[0].strip() if ")" in signature else signature
    try:
        tree = ast.parse(f"def f{head.rstrip(':')}: pass")
    except SyntaxError:
        return None
    fn = tree.body[0]
    if not isinstance(fn, ast.FunctionDef):
        return None
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = len(a.defaults)
    out = {p.arg: i >= len(positional) - defaults for i, p in enumerate(positional)}
    for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out[p.arg] = d is not None
    for star in (a.vararg, a.kwarg):
        if star is not None:
            out["*" + star.arg] = True
    return out


def public_removals(facts: Facts) -> tuple[list[ApiChange], list[str]]:
    """Public names removed or re-signed incompatibly, and the names only moved.

    A name removed from one module and defined in another in the same
    commit is a move, not a removal. Private names and modules, tests,
    examples and scripts are not public.
    """
    added = {(a.name, a.path) for a in facts.api_changes if a.change == "added"}
    added_names = {name for name, _ in added}
    removed: list[ApiChange] = []
    moved: list[str] = []
    for a in facts.api_changes:
        if a.name.startswith("_") or not is_public_module(a.path):
            continue
        if a.change == "removed" and a.name in added_names:
            moved.append(a.name)
        elif a.change == "removed" or (
            a.change == "signature" and signature_breaks(a.old_signature, a.new_signature)
        ):
            removed.append(a)
    return removed, moved


def dropped_parameter(removed: list[ApiChange], at_least: int = 3) -> tuple[str, list[str]] | None:
    """A parameter that leaves ``at_least`` public functions of the default path, and which.

    One parameter taken out of many public signatures (``head_first``) is a
    deliberate API removal: every caller that passes it breaks. Signatures
    re-shaped one by one are not: they are usually internal plumbing.
    """
    functions: dict[str, list[str]] = {}
    for a in removed:
        if a.change != "signature" or is_opt_in(a.path):
            continue
        before, after = _params(a.old_signature or ""), _params(a.new_signature or "")
        if before is None or after is None:
            continue
        for param in set(before) - set(after):
            if not param.startswith(("*", "_")):
                functions.setdefault(param, []).append(a.name)
    best = max(functions.items(), key=lambda kv: (len(set(kv[1])), kv[0]), default=None)
    if best is None or len(set(best[1])) < at_least:
        return None
    return best[0], list(dict.fromkeys(best[1]))


def public_ops(facts: Facts) -> list[OpChange]:
    """Native operators removed or broken in code users build (not tools or examples).

    One is enough to matter: an operator is registered on purpose, for
    callers outside the library, unlike a C++ helper.
    """
    return [o for o in facts.op_changes if not is_non_public(o.path)]


def removed_modules(facts: Facts) -> list[str]:
    """Public modules the commit deletes, as dotted names: their import paths break.

    A module whose file name is added elsewhere in the same commit moved.
    Packages (``__init__.py``) are :func:`removed_packages`.
    """
    added = {PurePosixPath(f.path).name for f in facts.files if f.status is FileStatus.ADDED}
    # ``x.py`` that becomes ``x/__init__.py`` keeps its import path.
    new_packages = {
        str(PurePosixPath(f.path).parent)
        for f in facts.files
        if f.status is FileStatus.ADDED and PurePosixPath(f.path).name == "__init__.py"
    }
    gone_packages = {
        PurePosixPath(f.path).parent
        for f in facts.files
        if f.status is FileStatus.DELETED and PurePosixPath(f.path).name == "__init__.py"
    }
    out = []
    for f in facts.files:
        path = PurePosixPath(f.path)
        if f.status is not FileStatus.DELETED or path.name == "__init__.py":
            continue
        if str(path.with_suffix("")) in new_packages:
            continue
        if path.parent in gone_packages:
            continue  # the whole package goes (or moves): :func:`removed_packages` decides
        if path.name in added or not is_public_module(f.path) or is_opt_in(f.path):
            continue
        if _model_dir(f.path):
            continue  # one model's own helper module: its model's business
        parts = [p for p in path.with_suffix("").parts if p not in ("src", "lib")]
        out.append(".".join(parts))
    return out


def removed_packages(facts: Facts) -> list[str]:
    """Public packages the commit deletes (their ``__init__.py`` goes), as dotted names.

    A package re-created under the same name elsewhere in the commit moved.
    """
    inits = [f for f in facts.files if PurePosixPath(f.path).name == "__init__.py"]
    created = {PurePosixPath(f.path).parent.name for f in inits if f.status is FileStatus.ADDED}
    out = []
    for f in inits:
        parent = PurePosixPath(f.path).parent
        deleted = f.status is FileStatus.DELETED and parent.name not in created
        if deleted and is_public_module(f.path) and not is_opt_in(f.path):
            out.append(".".join(p for p in parent.parts if p not in ("src", "lib")))
    return out


def narrow_scope(
    title: str, facts: Facts, platform_tags: frozenset[str], *, by_model: bool = True
) -> str | None:
    """What confines the change to a few users, in words for the reason; None for a core path.

    ``by_model=False`` leaves out what names one model (tags, paths): a new
    model family is a capability of its own, not a narrow change to one model.
    """
    for tag in facts.tags:
        if re.sub(r"[\s_-]+", "", tag) in platform_tags:
            return tag
    for tag in facts.tags:
        if (by_model and MODEL_FAMILY.fullmatch(tag)) or HARDWARE_GENERATION.search(tag):
            return tag
    hardware = HARDWARE_GENERATION.search(title)
    if hardware:
        return hardware.group(0)
    code = [f.path for f in facts.files if file_kind(f.path) == "source"]
    model = _model_in_paths(title, code) if by_model else None
    if model:
        return model
    if code and all(is_peripheral(p) for p in code):
        return _first_peripheral_dir(code[0])
    # Changes inside one model's existing directory; a model added whole is a
    # new model family, which the rubric rates by itself.
    existing = [f.path for f in facts.files if f.status is not FileStatus.ADDED]
    models = {_model_dir(p) for p in code}
    if by_model and code and None not in models and set(code) <= set(existing):
        return sorted(d for d in models if d)[0]
    platforms = {_platform_dir(p, platform_tags) for p in code}
    if code and None not in platforms:
        return sorted(d for d in platforms if d)[0]
    return None


_MODEL_CLASS = re.compile(r"(ForCausalLM|ForConditionalGeneration|LMHeadModel|Model)$")
"""What the top-level class of a model implementation is called in Transformers-style code."""
NEW_MODEL_LINES = 100
"""A new model module shorter than this is a registry entry or an adapter, not a model."""


def new_model_family(facts: Facts) -> str | None:
    """A model architecture the commit adds whole, as a module path; None when it adds none.

    A new module of at least :data:`NEW_MODEL_LINES` lines, right in a
    ``models/`` directory or in a package the commit creates there, that
    defines a model class (``Glm4MoeForCausalLM``). New files inside a model
    package that already existed (a second pipeline for Wan2.2) extend that
    model: they are not a new family.
    """
    added = [
        f
        for f in facts.files
        if f.status is FileStatus.ADDED
        and f.path.endswith(".py")
        and file_kind(f.path) == "source"
        and not is_peripheral(f.path)
    ]
    new_packages = {
        str(PurePosixPath(f.path).parent) for f in added if f.path.endswith("/__init__.py")
    }
    modules = []
    for f in added:
        parts = PurePosixPath(f.path).parts
        for i, part in enumerate(parts[:-1]):
            if part not in ("models", "model_zoo"):
                continue
            own = len(parts) == i + 2 or str(PurePosixPath(*parts[: i + 2])) in new_packages
            if own:
                modules.append(f)
            break
    paths = {f.path for f in modules}
    if sum(f.added for f in modules) < NEW_MODEL_LINES:
        return None
    for a in facts.api_changes:
        added_class = a.change == "added" and a.kind == "class" and a.path in paths
        if added_class and _MODEL_CLASS.search(a.name) and not a.name.startswith("_"):
            return a.path
    return None


SHARED_MODEL_FILES = frozenset(
    {"utils", "util", "common", "base", "__init__", "registry", "interfaces", "layers", "modules",
     "config", "configs", "loader", "model_loader", "helpers"}
)  # fmt: skip
"""Files of a ``models/`` directory that every model shares, so not one model's code."""


def _model_dir(path: str) -> str | None:
    """``…/models/<one model>/…`` or ``…/models/<one model>.py``: one model's own code."""
    parts = _parts(path)
    for i, part in enumerate(parts[:-1]):
        if part in ("models", "model_zoo") and i + 1 < len(parts):
            name = parts[i + 1].removesuffix(".py")
            if name not in SHARED_MODEL_FILES and not name.startswith("_"):
                return "/".join(parts[: i + 2]).removesuffix(".py") + (
                    "/" if i + 2 < len(parts) else ""
                )
    return None


def _platform_dir(path: str, platform_tags: frozenset[str]) -> str | None:
    """A directory of ``path`` that names one platform (``backends/triton_ascend/``).

    The top directory is the project's own package (``vllm_ascend``), which
    names the platform the whole project is for, so it does not count.
    """
    parts = _parts(path)[:-1]
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    for part in parts[1:]:
        if any(token in platform_tags for token in re.split(r"[_\-.]+", part)):
            return part + "/"
    return None


def _model_in_paths(title: str, paths: list[str]) -> str | None:
    """A model family the title names whose own code the diff touches.

    "Fix a leak for Whisper" in the shared model runner is a core fix; the
    same words with a change in ``models/whisper.py`` are Whisper's alone.
    """
    for hit in MODEL_FAMILY.finditer(title):
        stem = re.sub(r"[^a-z]", "", hit.group(1).lower())
        if stem and any(stem in re.sub(r"[^a-z/]", "", p.lower()) for p in paths):
            return hit.group(0)
    return None


def _first_peripheral_dir(path: str) -> str:
    for part in PurePosixPath(path).parts[:-1]:
        low = part.lower()
        if low in OPT_IN_DIRS or low in NON_PUBLIC_DIRS or low.startswith("."):
            return part + "/"
    return path


def host_pin(facts: Facts) -> str | None:
    """The package a dedicated pin file names, when the commit changes one.

    A repository keeps a file such as ``vllm_lkg.version`` or
    ``torch-commit.txt`` for one package only: the host framework it is
    built against. Toolchain pins (``.python-version``) are not hosts.
    """
    for f in facts.files:
        package = pin_file_package(f.path)
        if package:
            return package
    return None


def host_pin_move(facts: Facts) -> tuple[str, str, str, str] | None:
    """``(package, old, new, path)`` of the host pin file the commit moves, when both are read."""
    for path, old, new in facts.pin_moves:
        package = pin_file_package(path)
        if package and old and new and old != new:
            return package, old, new, path
    return None
