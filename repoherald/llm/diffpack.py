"""Fit a commit's diff into a model's token budget, keeping what matters most.

A diff is the best evidence of what a commit does, but one commit can be
megabytes (a vendored library, a regenerated lock file, a data dump) while a
prompt holds a few thousand tokens. Cutting the text at N tokens would show
the model the first files in path order (often ``.github/`` or ``docs/``) and
none of the source change the commit is about. So the diff is split per file
and per hunk, noise is set aside by name, and the room left is shared out by
priority. Every omission is said in the text, so the model never mistakes a
partial view for the whole change; the caller gets the same facts as data in
:class:`PackedDiff` (``clipped``, ``unseen``) to list or check against.

The text is data, not instructions. Each file section starts with a header
line ``=== path (status, +a/-d) ===`` followed by git's hunks verbatim; our
own notes are lines in square brackets. Every line of a hunk starts with
``@@``, a space, ``+``, ``-`` or ``\\``, so nothing in a repository can forge
a section header or a note, and paths are escaped so a file name cannot break
a header line. The caller delimits the whole text in its prompt.

Nothing here reads git or the network: it works on the per-file patches a
source returns (:class:`~repoherald.models.CommitPatch`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import PurePosixPath

from repoherald.analysis.facts.commit import file_kind
from repoherald.analysis.facts.deps import is_lockfile
from repoherald.models import FilePatch, FileStatus

# -- token estimate ------------------------------------------------------------

_ASCII_SPACE = (" ", "\t", "\n", "\r", "\x0b", "\x0c")


def estimate_tokens(text: str) -> int:
    """A conservative, offline guess of how many tokens ``text`` costs a model.

    No tokenizer is shipped or downloaded: models differ, and a budget only
    needs an upper bound that is cheap on megabytes of diff. The estimate is
    built from counts Python makes in C (``str.count``, ``str.split``,
    ``str.encode``), never a per-character loop:

    * about one token per 3.5 visible ASCII characters, plus half a token per
      word (whitespace-separated run), plus one per line. BPE vocabularies
      merge runs of spaces (indentation) into one token and split code at
      punctuation, so this lands close to real counts for source code and
      errs high (up to ~50%) for English prose;
    * one token per non-ASCII character (CJK and most other scripts cost
      about one token per character).

    The arithmetic is integer and each term is additive, except that joining
    two texts can merge a word across the seam, so
    ``estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b)``:
    :func:`pack_diff` relies on this to budget piece by piece.
    """
    if not text:
        return 0
    n = len(text)
    ascii_n = n if text.isascii() else len(text.encode("ascii", "ignore"))
    visible = ascii_n - sum(text.count(c) for c in _ASCII_SPACE)
    words = len(text.split())
    lines = text.count("\n")
    # visible/3.5 + words/2 + lines, in fourteenths so the result is exact.
    units = 4 * visible + 7 * words + 14 * lines
    return -(-units // 14) + (n - ascii_n)


# -- what not to show ------------------------------------------------------------

_GENERATED_SUFFIXES = (
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    ".min.js",
    ".min.css",
    ".map",
)
_GENERATED_DIRS = frozenset({"dist", "__snapshots__"})
_VENDORED_DIRS = frozenset(
    {"vendor", "vendored", "_vendor", "third_party", "thirdparty", "3rdparty", "external"}
    | {"node_modules"}
)


def _skip_reason(fp: FilePatch) -> str | None:
    """Why a file is not shown at all, decided from its name and status alone.

    A deleted file says all it has to say by its name; binaries have no text;
    lock files, generated and vendored code are large, machine-made or
    someone else's, and would crowd out the change the commit is about.
    """
    if fp.status is FileStatus.DELETED:
        return "deleted"
    if fp.binary:
        return "binary"
    lower = fp.path.lower()
    p = PurePosixPath(lower)
    dirs = set(p.parts[:-1])
    if is_lockfile(fp.path):
        return "lock"
    if "generated" in lower or lower.endswith(_GENERATED_SUFFIXES) or dirs & _GENERATED_DIRS:
        return "generated"
    if dirs & _VENDORED_DIRS:
        return "vendored"
    return None


# -- trimming context ------------------------------------------------------------

_HUNK_HEAD = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


def _range(start: int, count: int) -> str:
    """Git's spelling of a hunk range: an empty range names the line before it."""
    if count == 1:
        return str(start)
    if count == 0:
        return f"{start - 1},0"
    return f"{start},{count}"


def _trim_context(hunk: str, keep: int) -> list[str]:
    """Split ``hunk`` so at most ``keep`` context lines surround each change.

    Content lines stay verbatim; only the ``@@`` line numbers of the pieces
    are recomputed (the function name after ``@@`` stays on the first piece,
    where git put it). Returns ``[hunk]`` unchanged when nothing is trimmed
    or the hunk is not one this function understands.
    """
    lines = hunk.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    m = _HUNK_HEAD.match(lines[0]) if lines else None
    if m is None:
        return [hunk]
    body = lines[1:]
    kinds = [ln[:1] for ln in body]
    if any(k not in (" ", "+", "-", "\\") for k in kinds):
        return [hunk]
    far = len(body) + keep + 1
    dist = [far] * len(body)
    last = -far
    for i, k in enumerate(kinds):
        if k in ("+", "-"):
            last = i
        dist[i] = i - last
    last = far * 2
    for i in range(len(body) - 1, -1, -1):
        if kinds[i] in ("+", "-"):
            last = i
        dist[i] = min(dist[i], last - i)
    kept = [False] * len(body)
    for i, k in enumerate(kinds):
        if k == "\\":
            kept[i] = i > 0 and kept[i - 1]
        else:
            kept[i] = dist[i] <= keep
    if all(kept):
        return [hunk]
    old_count0 = int(m.group(2)) if m.group(2) is not None else 1
    new_count0 = int(m.group(4)) if m.group(4) is not None else 1
    old_no = int(m.group(1)) + (0 if old_count0 else 1)
    new_no = int(m.group(3)) + (0 if new_count0 else 1)
    first_section = m.group(5)
    pieces: list[str] = []
    run: list[str] = []
    run_old = run_new = old_n = new_n = 0

    def flush() -> None:
        if run:
            section = first_section if not pieces else ""
            head = f"@@ -{_range(run_old, old_n)} +{_range(run_new, new_n)} @@{section}\n"
            pieces.append(head + "".join(ln + "\n" for ln in run))

    for i, k in enumerate(kinds):
        if kept[i]:
            if not run:
                run_old, run_new, old_n, new_n = old_no, new_no, 0, 0
            run.append(body[i])
            old_n += k in (" ", "-")
            new_n += k in (" ", "+")
        elif run:
            flush()
            run = []
        old_no += k in (" ", "-")
        new_no += k in (" ", "+")
    flush()
    return pieces


# -- packing ---------------------------------------------------------------------

_RANK = {"source": 0, "tests": 1, "bench": 1, "docs": 3}
"""Priority class by :func:`file_kind`; anything else (build, ci, deps, other) is 2."""
_WEIGHT = (8, 4, 2, 1)
"""Share of the room per class: a source file may take 8x what a docs file takes."""

_SAFE_PATH = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, 0x85)} | {
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def _show_path(path: str) -> str:
    """A path on one line: control characters and line separators escaped."""
    return path.translate(_SAFE_PATH)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# Notes are short: at small budgets they are a real part of a file's cost.


def _note_dels(n: int) -> str:
    return f"[… {_plural(n, 'deletion-only hunk')} not shown]\n"


def _note_more(n: int) -> str:
    return f"[… {_plural(n, 'more hunk')} not shown]\n"


def _note_lines(n: int) -> str:
    return f"[… {_plural(n, 'more line')} of this hunk not shown]\n"


_NOTE_UNREAD = "[… rest of this file's diff not read]\n"


@dataclass
class _File:
    """Working state of one shown-or-not file while packing."""

    index: int
    fp: FilePatch
    rank: int
    heading: str
    hunks: list[str]
    """All hunks after context trimming, in order."""
    costs: list[int]
    adds: list[int]
    """Indices into ``hunks`` of the hunks that add lines."""
    n_dels: int
    unread: bool
    """The patch ended before this file's last hunk (it was cut)."""
    add_prefix: list[int] = field(default_factory=list)
    line_costs: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    """Per clipped hunk: cumulative line costs so far, and where the next line starts."""

    @property
    def weight(self) -> int:
        return _WEIGHT[self.rank]

    def base_cost(self, drop_dels: bool) -> int:
        cost = estimate_tokens(self.heading)
        if drop_dels and self.n_dels:
            cost += estimate_tokens(_note_dels(self.n_dels))
        if self.unread:
            cost += estimate_tokens(_NOTE_UNREAD)
        return cost

    def full_cost(self, drop_dels: bool) -> int:
        if drop_dels:
            return self.base_cost(True) + self.add_prefix[-1]
        return self.base_cost(False) + sum(self.costs)

    def first_change(self, hunk: int) -> int:
        """How many lines of the hunk (``@@`` included) precede its first change."""
        text = self.hunks[hunk]
        at = min((i for i in (text.find("\n+"), text.find("\n-")) if i >= 0), default=-1)
        return text.count("\n", 0, at) + 1 if at >= 0 else text.count("\n")

    def cum_line_costs(self, hunk: int, limit: int, lines: int = 0) -> list[int]:
        """Cumulative costs of the hunk's first lines, up to ``limit`` tokens.

        (Or up to ``lines`` lines, whichever is further.)

        Only the hunk being clipped needs per-line costs, and only as far as
        the room goes: a 100 000-line new file is never measured line by line.
        """
        cum, pos = self.line_costs.setdefault(hunk, ([0], [0]))
        text = self.hunks[hunk]
        while (cum[-1] <= limit or len(cum) <= lines) and pos[0] < len(text):
            end = text.find("\n", pos[0]) + 1  # every hunk ends with a newline
            cum.append(cum[-1] + estimate_tokens(text[pos[0] : end]))
            pos[0] = end
        return cum


@dataclass(frozen=True, slots=True)
class _Plan:
    """What of one file is shown: all, or a prefix of its adding hunks."""

    cost: int
    full: bool
    drop_dels: bool
    shown: int = 0
    """Whole adding hunks shown (when clipped)."""
    partial_lines: int = 0
    """Lines (``@@`` included) shown of the next adding hunk, 0 for none."""


def _plan(f: _File, cap: int) -> _Plan | None:
    """The most of ``f`` (deletion-only hunks dropped) that fits in ``cap`` tokens.

    Whole hunks first, in file order; then as many lines of the next hunk as
    fit, since one new file is one hunk and would otherwise be all or
    nothing. A partial hunk reaches at least its first changed line: its
    leading context alone would say nothing. None when not even that fits.
    """
    if f.hunks and not f.adds:
        return None  # only deletion-only hunks: nothing left to show
    base = f.base_cost(True)
    total = f.add_prefix[-1]
    if base + total <= cap:
        return _Plan(base + total, full=True, drop_dels=True)
    if not f.adds:
        return None
    n = len(f.adds)
    room = cap - base - estimate_tokens(_note_more(n))
    shown = max(bisect_right(f.add_prefix, room) - 1, 0)
    shown = min(shown, n - 1)
    cost = base + f.add_prefix[shown] + estimate_tokens(_note_more(n - shown))
    left = room - f.add_prefix[shown]
    partial = 0
    hunk = f.adds[shown]
    n_lines = f.hunks[hunk].count("\n")
    note_lines = estimate_tokens(_note_lines(n_lines))
    if left - note_lines > 0:
        cum = f.cum_line_costs(hunk, left - note_lines)
        k = bisect_right(cum, left - note_lines) - 1
        if f.first_change(hunk) < k < n_lines:
            partial = k
            cost += cum[k] + estimate_tokens(_note_lines(n_lines - k))
            rest = n - shown - 1
            cost += -estimate_tokens(_note_more(n - shown)) + (
                estimate_tokens(_note_more(rest)) if rest else 0
            )
    if shown == 0 and partial == 0:
        return None
    return _Plan(cost, full=False, drop_dels=True, shown=shown, partial_lines=partial)


def _render(f: _File, plan: _Plan) -> str:
    parts = [f.heading]
    if plan.full and not plan.drop_dels:
        parts += f.hunks
    elif plan.full:
        parts += [f.hunks[i] for i in f.adds]
    else:
        parts += [f.hunks[i] for i in f.adds[: plan.shown]]
        rest = len(f.adds) - plan.shown
        if plan.partial_lines:
            lines = f.hunks[f.adds[plan.shown]].split("\n")[:-1]
            parts += [ln + "\n" for ln in lines[: plan.partial_lines]]
            parts.append(_note_lines(len(lines) - plan.partial_lines))
            rest -= 1
        if rest:
            parts.append(_note_more(rest))
    if plan.drop_dels and f.n_dels:
        parts.append(_note_dels(f.n_dels))
    if f.unread:
        parts.append(_NOTE_UNREAD)
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class PackedDiff:
    """The part of a diff a model is shown, and an account of the rest."""

    text: str
    """File sections, most important first; empty when nothing fits."""
    tokens: int
    """``estimate_tokens(text)``; never more than the budget."""
    seen: tuple[str, ...]
    """Paths shown in full, in the order of ``text``."""
    clipped: tuple[str, ...]
    """Paths shown in part (hunks or lines omitted, each omission noted in ``text``)."""
    unseen: tuple[tuple[str, str], ...]
    """``(path, reason)`` for files not shown at all, in the patch's order.

    Reasons: ``binary``, ``lock``, ``generated``, ``vendored``, ``deleted``,
    ``deletions only`` (only deletion-only hunks, dropped for room) and
    ``budget``. ``text`` does not list these files: the caller does, next to
    the file list it already gives the model.
    """


def _heading(fp: FilePatch) -> str:
    name = _show_path(fp.path)
    if fp.old_path is not None and fp.old_path != fp.path:
        name = f"{_show_path(fp.old_path)} -> {name}"
    status = fp.status.value.replace("_", " ")
    extra = ""
    old_mode = re.search(r"^old mode (\d+)$", fp.header, re.M)
    new_mode = re.search(r"^new mode (\d+)$", fp.header, re.M)
    if old_mode and new_mode:
        extra = f", mode {old_mode.group(1)} -> {new_mode.group(1)}"
    return f"=== {name} ({status}, +{fp.added}/-{fp.deleted}{extra}) ===\n"


def _prepare(index: int, fp: FilePatch, context_lines: int) -> _File:
    hunks: list[str] = []
    for h in fp.hunks:
        hunks.extend(_trim_context(h, max(context_lines, 0)))
    plus = sum(h.count("\n+") for h in fp.hunks)
    minus = sum(h.count("\n-") for h in fp.hunks)
    costs = [estimate_tokens(h) for h in hunks]
    adds = [i for i, h in enumerate(hunks) if "\n+" in h]
    f = _File(
        index=index,
        fp=fp,
        rank=_RANK.get(file_kind(fp.path), 2),
        heading=_heading(fp),
        hunks=hunks,
        costs=costs,
        adds=adds,
        n_dels=len(hunks) - len(adds),
        unread=plus < fp.added or minus < fp.deleted,
    )
    f.add_prefix = [0, *accumulate(costs[i] for i in adds)]
    return f


def pack_diff(
    patches: Sequence[FilePatch], budget_tokens: int, context_lines: int = 3
) -> PackedDiff:
    """Fit the most telling part of a change into ``budget_tokens``.

    In this order:

    1. Deleted, binary, lock, generated and vendored files are set aside by
       name (``unseen``); files the patch text never reached (it was cut)
       go to ``unseen`` as ``budget``.
    2. The rest is ordered by class (source, then tests and benchmarks, then
       build, CI, dependencies and other files, then docs) and within a class
       by lines changed, largest first: the biggest change in the most
       important class is most likely what the commit is about, so it comes
       first in the text, gets spare room first and is the last to go.
    3. If everything fits, everything is shown. If not, deletion-only hunks
       (no ``+`` line) are dropped, file by file from the least important,
       since removed code says least about what the commit adds; files left
       with nothing go to ``unseen`` as ``deletions only``.
    4. If that is not enough, files are admitted in priority order with
       their smallest view (heading and first changed lines) until the next
       does not fit (glimpses beyond the first file take at most half the
       budget), then the room is shared among them: each may take up to
       ``weight x C`` tokens (weights 8/4/2/1 by class) for the largest
       ``C`` that fits, so small files appear in full and a huge one is
       clipped to its first hunks (or first lines of one hunk) instead of
       crowding out the others. Files not admitted go to ``unseen`` as
       ``budget``. So a file is shown only if every more important file is,
       unless that one could not be shown even alone.

    ``context_lines`` caps the context kept around each change (hunks are
    split, with recomputed ``@@`` ranges, where longer context runs are cut);
    at or above the patch's own ``-U`` the hunks are git's, byte for byte.
    The same input always gives the same output.
    """
    unseen: list[tuple[int, str, str]] = []
    files: list[_File] = []
    for index, fp in enumerate(patches):
        reason = _skip_reason(fp)
        if reason is None and not fp.header and (fp.added or fp.deleted):
            reason = "budget"
        if reason is not None:
            unseen.append((index, fp.path, reason))
        else:
            files.append(_prepare(index, fp, context_lines))
    files.sort(key=lambda f: (f.rank, -(f.fp.added + f.fp.deleted), f.fp.path, f.index))

    budget = max(budget_tokens, 0)
    plans: list[_Plan | None] = [
        _Plan(f.full_cost(False), full=True, drop_dels=False) for f in files
    ]
    total = sum(p.cost for p in plans if p is not None)
    if total > budget:
        # Step 3: drop deletion-only hunks, least important file first.
        for i in range(len(files) - 1, -1, -1):
            f = files[i]
            if not f.n_dels:
                continue
            old = plans[i]
            assert old is not None
            new = _Plan(f.full_cost(True), full=True, drop_dels=True) if f.adds else None
            plans[i] = new
            total += (new.cost if new else 0) - old.cost
            if total <= budget:
                break
    if total > budget:
        plans = _share(files, budget)

    sections: list[str] = []
    seen: list[str] = []
    clipped: list[str] = []
    for f, plan in zip(files, plans, strict=True):
        if plan is None:
            reason = "deletions only" if f.hunks and not f.adds and f.n_dels else "budget"
            unseen.append((f.index, f.fp.path, reason))
            continue
        sections.append(_render(f, plan))
        if plan.full and not (plan.drop_dels and f.n_dels) and not f.unread:
            seen.append(f.fp.path)
        else:
            clipped.append(f.fp.path)
    text = "".join(sections)
    tokens = estimate_tokens(text)
    # Guaranteed by estimate_tokens being subadditive; checked, not hoped.
    assert tokens <= budget, (tokens, budget)
    unseen.sort()
    return PackedDiff(
        text=text,
        tokens=tokens,
        seen=tuple(seen),
        clipped=tuple(clipped),
        unseen=tuple((path, reason) for _, path, reason in unseen),
    )


def _min_cap(f: _File) -> int:
    """The smallest cap at which :func:`_plan` shows something of ``f``.

    That is the heading, the notes, and either the first adding hunk whole or
    its lines up to the first change, whichever is cheaper (or the whole file
    when that is cheaper still).
    """
    base = f.base_cost(True)
    full = base + f.add_prefix[-1]
    if not f.adds:
        return full
    more = estimate_tokens(_note_more(len(f.adds)))
    best = min(full, base + more + f.add_prefix[1])
    hunk = f.adds[0]
    n_lines = f.hunks[hunk].count("\n")
    need = f.first_change(hunk) + 1
    if need < n_lines:
        cum = f.cum_line_costs(hunk, 0, lines=need)
        best = min(best, base + more + estimate_tokens(_note_lines(n_lines)) + cum[need])
    if _plan(f, best) is None:  # cannot happen; never trade correctness for it
        return full
    return best


def _share(files: list[_File], budget: int) -> list[_Plan | None]:
    """Step 4 of :func:`pack_diff`: who is shown, then how much of each.

    Admission is strictly by priority: each file in turn gets its smallest
    view (:func:`_min_cap`) until the next one does not fit; a file whose
    smallest view exceeds the whole budget is passed over, since it could
    never be shown. Beyond the first file, these glimpses may take only half
    the budget, so that the most important files keep room to be read, not
    just named. The room left is then shared: each admitted file may take up
    to ``weight x C`` tokens for the largest ``C`` that fits (bisection), so
    small files appear in full and a huge one is clipped instead of crowding
    out the others. Crumbs go to files in priority order, then to further
    files while they fit.
    """
    plans: list[_Plan | None] = [None] * len(files)
    caps: dict[int, int] = {}
    used = 0
    stop = len(files)
    for i, f in enumerate(files):
        if f.hunks and not f.adds:
            continue  # only deletion-only hunks: "deletions only"
        cap = _min_cap(f)
        if cap > budget:
            continue
        limit = budget // 2 if caps else budget
        plan = _plan(f, cap)
        assert plan is not None
        if used + plan.cost > limit:
            stop = i
            break
        caps[i] = cap
        plans[i] = plan
        used += plan.cost

    def plans_at(c: int) -> tuple[dict[int, _Plan | None], int]:
        out = {i: _plan(files[i], max(cap, c * files[i].weight)) for i, cap in caps.items()}
        return out, sum(p.cost for p in out.values() if p is not None)

    lo = 0
    hi = max((files[i].full_cost(True) // files[i].weight + 1 for i in caps), default=0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        _, cost = plans_at(mid)
        if cost <= budget:
            lo = mid
        else:
            hi = mid - 1
    chosen, used = plans_at(lo)
    for i, plan in chosen.items():
        plans[i] = plan
    spare = budget - used
    for i in caps:
        current = plans[i]
        assert current is not None
        if current.full:
            continue
        better = _plan(files[i], current.cost + spare)
        if better is not None and _more(better, current):
            spare -= better.cost - current.cost
            plans[i] = better
    for i in range(stop, len(files)):
        f = files[i]
        if (f.hunks and not f.adds) or _min_cap(f) > budget:
            continue
        plan = _plan(f, spare)
        if plan is None:
            break
        plans[i] = plan
        spare -= plan.cost
    return plans


def _more(a: _Plan, b: _Plan) -> bool:
    """True when plan ``a`` shows more of a file than plan ``b``."""
    if a.full != b.full:
        return a.full
    return (a.shown, a.partial_lines) > (b.shown, b.partial_lines)
