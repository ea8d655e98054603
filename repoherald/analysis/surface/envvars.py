"""Environment variables a project reads, and the ones a commit removes or re-defaults.

An environment variable is part of a project's compatibility surface: a
deployment sets it, and when the project stops reading it or reads it with
another default, the deployment behaves differently without any error.
The rubric calls both high.

Only text is read, no parse: ``os.getenv("X", "0")``, ``os.environ.get("X")``,
``os.environ["X"]``, ``environ.setdefault("X", …)`` and the registry style of
vLLM and its plugins (``"VLLM_X": lambda: …`` in ``envs.py``). A removal counts
only in such a registry file (where the project declares its variables), so a
read that merely moves to an unchanged module is not taken for a removal; a
default counts wherever the read is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

_NAME = r"[A-Z][A-Z0-9_]{2,}"
_CALL = re.compile(r"(?:getenv|environ\.get|environ\.setdefault)\(|environ\[")
"""Where a read starts; the name and default are read from the text right after it."""
_CALL_ARGS = re.compile(rf"""\s*["']({_NAME})["']\s*(,)?""")
_ITEM = re.compile(rf"""\s*["']({_NAME})["']\s*\]""")
_REGISTRY_ENTRY = re.compile(rf"""^\s*["']({_NAME})["']\s*:\s*(?:lambda|\()""", re.M)
REGISTRY_FILES = frozenset({"envs.py", "env.py", "environment.py", "env_vars.py", "envvars.py"})
"""Files where a project declares the variables it reads."""
SYSTEM_PREFIXES = (
    "CUDA_", "HIP_", "ROCM_", "NCCL_", "OMP_", "MKL_", "PYTHON", "PATH", "HOME", "USER",
    "TMP", "TEMP", "LD_", "HF_", "TRANSFORMERS_", "TORCH_", "PYTORCH_", "MASTER_", "RANK",
    "WORLD_SIZE", "LOCAL_", "XDG_", "CI", "GITHUB_", "TOKENIZERS_", "TRITON_",
)  # fmt: skip
"""Variables of the platform or of other tools: a project that stops reading them
changes nothing its own users configured for it."""


@dataclass(frozen=True, slots=True)
class EnvChanges:
    """What a commit does to the variables the project reads."""

    removed: tuple[str, ...] = ()
    redefaulted: tuple[tuple[str, str, str], ...] = ()
    """(name, old default, new default)."""


def reads(text: str) -> dict[str, str | None]:
    """Variable -> the default its read gives (source text), None when it has none.

    ``str.find`` locates each ``getenv``/``environ``, then a short match reads
    what follows: a regular expression searched over a whole module, thousands
    of lines in a model runner, cost more than parsing it.
    """
    out: dict[str, str | None] = {}
    for word in ("getenv", "environ"):
        at = text.find(word)
        while at != -1:
            _read_at(text, at, out)
            at = text.find(word, at + len(word))
    return out


def _read_at(text: str, at: int, out: dict[str, str | None]) -> None:
    m = _CALL.match(text, at)
    if m is None:
        return
    start = m.end()
    if m.group().endswith("["):
        item = _ITEM.match(text, start)
        if item and item.group(1) not in out:
            out[item.group(1)] = None
        return
    call = _CALL_ARGS.match(text, start)
    if call is None:
        return
    name = call.group(1)
    default = _argument(text, call.end()) if call.group(2) else None
    if name not in out or out[name] is None:
        out[name] = default


def _argument(text: str, start: int, limit: int = 200) -> str | None:
    """The argument that starts at ``start``, up to its ``,`` or ``)`` at depth zero."""
    depth = 0
    for i in range(start, min(len(text), start + limit)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return text[start:i].strip() or None
            depth -= 1
        elif ch == "," and depth == 0:
            return text[start:i].strip() or None
    return None


def _own(name: str) -> bool:
    return not name.startswith(SYSTEM_PREFIXES)


def changes(old: Mapping[str, str], new: Mapping[str, str]) -> EnvChanges:
    """Compare the variables read in the old and new text of each changed file (by path)."""
    new_text = "\n".join(new.values())
    removed: list[str] = []
    redefaulted: list[tuple[str, str, str]] = []
    for path, before in old.items():
        after = new.get(path)
        if after is None or not ("environ" in before or "getenv" in before):
            continue
        old_reads, new_reads = reads(before), reads(after)
        for name, default in old_reads.items():
            if not _own(name) or name not in new_reads:
                continue
            now = new_reads[name]
            if default is not None and now is not None and _norm(default) != _norm(now):
                redefaulted.append((name, default, now))
        if PurePosixPath(path).name in REGISTRY_FILES:
            declared = set(_REGISTRY_ENTRY.findall(before)) | set(old_reads)
            for name in sorted(declared):
                if _own(name) and name not in new_text:
                    removed.append(name)
    return EnvChanges(tuple(dict.fromkeys(removed)), tuple(dict.fromkeys(redefaulted)))


def _norm(default: str) -> str:
    return re.sub(r"\s+", "", default).replace("'", '"')
