"""Environment variables and command-line flags a commit stops reading or re-defaults.

Both are compared over the whole commit rather than file by file, because a
variable read in one file may move to another in the same change; only a
name no changed file reads any more counts as gone.
"""

from __future__ import annotations

from repoherald.analysis.surface import extract as sx
from repoherald.analysis.surface.compare import (
    ENV_DEFAULT,
    ENV_REMOVED,
    FLAG_DEFAULT,
    FLAG_REMOVED,
    FLAG_RENAMED,
    CommitFiles,
    FileVersions,
    Interest,
    SurfaceChange,
    has_marker,
)
from repoherald.analysis.surface.extract import is_public_module
from repoherald.models import Message, Text

_ENV_MARKERS = sx.ENV_MARKERS
_FLAG_MARKERS = sx.FLAG_MARKERS


def _parsed_sides(
    commit: CommitFiles,
    interest: Interest | None,
    markers: tuple[bytes, ...],
    names: frozenset[str],
) -> list[tuple[FileVersions, sx.ModuleSurface | None, sx.ModuleSurface | None]]:
    """Both sides of every public file that may read env vars / define flags.

    With an ``interest``, a file is parsed only when a side both reads the
    environment (or defines flags) and mentions one of the ``names`` the
    downstream uses: a change to any other name cannot concern it.
    """
    if interest is not None and not names:
        return []
    wanted = tuple(n.encode("utf-8", "surrogateescape") for n in sorted(names))
    out = []
    for fv in commit.files:
        paths = [p for p in (fv.old_path, fv.new_path) if p is not None]
        if not any(is_public_module(p) for p in paths):
            continue  # tests, benchmarks, private modules: not read at all
        if interest is not None and not any(
            has_marker(data, markers) and has_marker(data, wanted)
            for data in (commit.data(fv, False), commit.data(fv, True))
        ):
            continue
        old = commit.side(fv, new=False) if fv.old_path and is_public_module(fv.old_path) else None
        new = commit.side(fv, new=True) if fv.new_path and is_public_module(fv.new_path) else None
        out.append((fv, old, new))
    return out


def owned(var: str, module: str) -> bool:
    """Whether the project owns ``var``: its name starts with the package's (``VLLM_…``).

    Upstream code also reads variables that belong to others (``LOCAL_RANK``,
    ``CUDA_VISIBLE_DEVICES``); when it stops reading one of those, the
    downstream's setting still reaches whoever owns it, so that is no change.
    """
    return var.startswith(module.partition(".")[0].upper() + "_")


def env_changes(commit: CommitFiles, interest: Interest | None) -> list[SurfaceChange]:
    env = interest.env if interest else frozenset()
    sides = _parsed_sides(commit, interest, _ENV_MARKERS, env)
    now_read = {var for _, _, new in sides if new is not None for var in new.env}
    out: list[SurfaceChange] = []
    seen: set[str] = set()
    for _, old, new in sides:
        if old is None:
            continue
        for var, reads in sorted(old.env.items()):
            if not owned(var, old.module):
                continue
            if var not in now_read and var not in seen:
                seen.add(var)
                first = min(reads, key=lambda r: (not r.registry, r.line))
                certain = any(r.registry for r in reads)
                detail: Message = "" if certain else Text("ds.why.other_file")
                out.append(
                    SurfaceChange(
                        ENV_REMOVED,
                        old.module,
                        var,
                        first.default or "",
                        "",
                        detail,
                        old.path,
                        first.line,
                        certain,
                    )
                )
            elif new is not None and var in new.env:
                out.extend(_env_default(old, new, var, reads, new.env[var]))
    return out


def _env_default(
    old: sx.ModuleSurface,
    new: sx.ModuleSurface,
    var: str,
    before: list[sx.EnvRead],
    after: list[sx.EnvRead],
) -> list[SurfaceChange]:
    was = sorted({r.default for r in before if r.default is not None})
    now = sorted({r.default for r in after if r.default is not None})
    if not was or not now or was == now:
        return []
    line = min(r.line for r in after if r.default is not None)
    return [
        SurfaceChange(
            ENV_DEFAULT, old.module, var, ", ".join(was), ", ".join(now), "", new.path, line
        )
    ]


def flag_changes(commit: CommitFiles, interest: Interest | None) -> list[SurfaceChange]:
    flags = interest.flags if interest else frozenset()
    sides = _parsed_sides(commit, interest, _FLAG_MARKERS, flags)
    before: dict[str, tuple[sx.ModuleSurface, sx.FlagDef]] = {}
    after: dict[str, tuple[sx.ModuleSurface, sx.FlagDef]] = {}
    for _, old, new in sorted(sides, key=lambda s: (s[0].old_path or "", s[0].new_path or "")):
        for surf, table in ((old, before), (new, after)):
            if surf is not None:
                for flag, fdef in surf.flags.items():
                    table.setdefault(flag, (surf, fdef))
    out: list[SurfaceChange] = []
    added = {f: v for f, v in after.items() if f not in before}
    for flag, (surf, was) in before.items():
        if flag in after:
            now_surf, now = after[flag]
            if now.default != was.default and now.default and was.default:
                out.append(
                    SurfaceChange(
                        FLAG_DEFAULT,
                        surf.module,
                        flag,
                        was.default,
                        now.default,
                        "",
                        now_surf.path,
                        now.line,
                    )
                )
            continue
        twins = [
            f
            for f, (s, d) in added.items()
            if s.module == surf.module
            and ((was.dest and d.dest == was.dest) or (was.help and d.help == was.help))
        ]
        if len(twins) == 1:
            out.append(
                SurfaceChange(
                    FLAG_RENAMED, surf.module, flag, flag, twins[0], "", surf.path, was.line
                )
            )
        else:
            out.append(
                SurfaceChange(
                    FLAG_REMOVED, surf.module, flag, was.default, "", "", surf.path, was.line
                )
            )
    return out
