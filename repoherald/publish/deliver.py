"""Deliver repository-days to every ``[[publish]]`` target, exactly once, through the ledger.

The ledger (:mod:`repoherald.store.ledger`) remembers, per target,
repository and day, what was sent and its content hash. So a re-run of an
unchanged day sends nothing; a changed day is not posted to a chat again
unless forced (a group does not want two messages for one day), but is
edited in place where the target can (a GitHub issue); a target
that failed is recorded as failed and retried by the next run. One target's
failure never stops the others.

Days are read back from the archive files recorded in the store's
``reports`` table, so ``run`` and ``publish`` deliver the same thing and
``publish`` never analyses anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from repoherald.config.targets import NamedTarget
from repoherald.errors import PublishError
from repoherald.publish.base import (
    Delivery,
    Publication,
    Status,
    deliver,
    deliver_batch,
    is_batched,
)
from repoherald.publish.dry_run import preview
from repoherald.redact import redact
from repoherald.store.db import Store
from repoherald.store.ledger import LedgerStatus
from repoherald.store.ledger import content_hash as ledger_hash

CHANGED = "changed"
"""Outcome of a day whose report changed after it was sent to a chat: not sent again."""
DRY_RUN = "dry-run"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one repository-day at one target."""

    target: str
    repo: str
    day: date
    status: str
    """``sent``, ``unchanged``, ``changed``, ``failed`` or ``dry-run``."""
    message: str = ""
    size: int = 0

    @property
    def failed(self) -> bool:
        return self.status == Status.FAILED.value

    def line(self, *, status: bool = True) -> str:
        """One redacted line for the summary; ``status=False`` leaves the status word out
        (for a caller that already says "failed:")."""
        text = f"{self.target}: {self.repo} {self.day}"
        if status or not self.failed:
            text += f": {self.status}"
        if self.status == CHANGED:
            text += " (the report changed since it was sent; --force sends it again)"
        elif self.status == DRY_RUN:
            text += f": {self.message}, {self.size} bytes"
        elif self.message and self.status != Status.SENT.value:
            text += f": {self.message}"
        return redact(text)


def load_publication(
    name: str, day: date, lang: str, md_path: Path, archive: Path | None = None
) -> Publication:
    """A repository-day read back from its archive pair (``.md`` and its ``.json`` twin).

    ``archive`` is the archive's root folder: the publication's location is
    shown relative to it (see :func:`_shown`).
    """
    json_path = md_path.with_suffix(".json")
    try:
        markdown = md_path.read_text(encoding="utf-8")
        twin = json_path.read_text(encoding="utf-8")
    except OSError:
        raise PublishError(
            f"{name} {day}: the archived report {md_path} is missing:"
            " run `repoherald run --date` for that day again"
        ) from None
    location = _shown(md_path, archive)
    return Publication(name, "", day, lang, markdown, twin, location=location)


def _shown(path: Path, archive: Path | None) -> str:
    """``path`` as a reader of a chat message finds it: ``reports/2026/vllm/2026-08-20.md``.

    The archive's folder name and the path inside it: that is what the reader
    sees in the repository the archive is committed to, and an absolute path
    would name this machine's folders (``/home/alice/…``) in a group chat.
    Without the root (or outside it) the path relative to the working
    directory is shown, and failing that only the file's name.
    """
    resolved = path.resolve()
    for base, prefix in ((archive, True), (Path.cwd(), False)):
        if base is None:
            continue
        root = base.resolve()
        try:
            inside = resolved.relative_to(root)
        except ValueError:
            continue
        return ((Path(root.name) / inside) if prefix and root.name else inside).as_posix()
    return path.name


def report_rows(store: Store, repo: str, days: Iterable[date], lang: str) -> dict[date, Path]:
    """The archived ``.md`` of each day of ``repo`` (``lang`` preferred when several exist)."""
    out: dict[date, tuple[bool, Path]] = {}
    wanted = {d.isoformat() for d in days}
    rows = store.conn.execute("SELECT day, lang, path FROM reports WHERE repo = ?", (repo,))
    for day_text, row_lang, path in rows:
        if day_text not in wanted:
            continue
        d = date.fromisoformat(day_text)
        preferred = row_lang == lang
        if d not in out or (preferred and not out[d][0]):
            out[d] = (preferred, Path(path))
    return {d: p for d, (_, p) in sorted(out.items())}


def failed_days(store: Store, targets: Iterable[NamedTarget], repo: str) -> set[date]:
    """Days of ``repo`` whose last delivery to one of ``targets`` failed (to retry them)."""
    out: set[date] = set()
    for t in targets:
        for e in store.ledger_entries(target=t.name):
            if e.repo == repo and e.status is LedgerStatus.FAILED:
                out.add(e.day)
    return out


def _edits_in_place(target: NamedTarget) -> bool:
    """True for a publisher that edits what it sent (an issue) rather than sending again."""
    return bool(getattr(type(target.target.publisher), "edits_in_place", False))


def _already_there(
    store: Store, target: NamedTarget, item: Publication, *, force: bool
) -> Outcome | None:
    """The outcome when the ledger says not to send ``item`` (sent unchanged, or changed).

    A changed day goes out again only with ``force``, or to a publisher that
    edits in place: an issue is corrected, a chat is not sent a second message.
    """
    entry = store.ledger_get(target.name, item.name, item.day)
    if entry is None or entry.status is not LedgerStatus.SENT:
        return None
    if entry.content_hash == ledger_hash(item.content_hash()):
        return Outcome(target.name, item.name, item.day, Status.UNCHANGED.value)
    if force or _edits_in_place(target):
        return None
    return Outcome(target.name, item.name, item.day, CHANGED)


def _record(store: Store, target: NamedTarget, item: Publication, result: Delivery) -> Outcome:
    """File ``result`` in the ledger for ``item`` and say what happened."""
    failed = result.status is Status.FAILED
    store.ledger_record(
        target.name,
        item.name,
        item.day,
        status=LedgerStatus.FAILED if failed else LedgerStatus.SENT,
        content=item.content_hash(),
        remote_id=result.remote_id,
        error=result.message if failed else "",
    )
    status = Status.FAILED if failed else Status.SENT
    return Outcome(target.name, item.name, item.day, status.value, result.message)


def deliver_one(
    store: Store, target: NamedTarget, item: Publication, *, force: bool, dry_run: bool
) -> Outcome:
    """Send ``item`` to ``target`` unless the ledger says it is already there."""
    skipped = _already_there(store, target, item, force=force)
    if skipped is not None:
        return skipped
    publisher: Any = target.target.publisher
    if _edits_in_place(target):
        entry = store.ledger_get(target.name, item.name, item.day)
        if entry is not None and entry.remote_id:
            item = replace(item, sent_as=entry.remote_id)
    if dry_run:
        return _dry_run(target, [item])[0]
    return _record(store, target, item, deliver(publisher, item))


@dataclass
class Batch:
    """Publications held back for targets that send one message per run (an e-mail digest).

    :func:`deliver_days` adds to it, repository after repository; :meth:`flush`
    sends each target's message once all are in and files every
    repository-day in the ledger under that one message's id.
    """

    pending: dict[str, tuple[NamedTarget, list[Publication]]] = field(default_factory=dict)

    def add(self, target: NamedTarget, item: Publication) -> None:
        self.pending.setdefault(target.name, (target, []))[1].append(item)

    def flush(self, store: Store, *, dry_run: bool = False) -> list[Outcome]:
        """Send every held-back message (or measure it, for ``dry_run``) and empty the batch."""
        out: list[Outcome] = []
        for target, items in self.pending.values():
            if dry_run:
                out.extend(_dry_run(target, items))
                continue
            batched: Any = target.target.publisher
            result = deliver_batch(batched, items)
            out.extend(_record(store, target, item, result) for item in items)
        self.pending.clear()
        return out


def _dry_run(target: NamedTarget, items: list[Publication]) -> list[Outcome]:
    """One outcome per item of what sending ``items`` as one message would do."""
    try:
        what, size = preview(target, items)
    except PublishError as exc:
        return [Outcome(target.name, i.name, i.day, Status.FAILED.value, str(exc)) for i in items]
    return [Outcome(target.name, i.name, i.day, DRY_RUN, what, size) for i in items]


def deliver_days(
    store: Store,
    targets: Iterable[NamedTarget],
    repo: str,
    paths: dict[date, Path],
    lang: str,
    *,
    force: bool = False,
    dry_run: bool = False,
    batch: Batch | None = None,
    archive: Path | None = None,
) -> list[Outcome]:
    """Deliver each archived day of ``repo`` to every target that takes it.

    ``archive`` is the archive's root, to say where a report lies relative to it.

    Days for a batched target (an e-mail digest) go into ``batch``, which the
    caller flushes after its last repository; without one they are sent as
    one message at the end of this call.
    """
    mine = [t for t in targets if t.takes(repo)]
    own = batch is None
    held = Batch() if batch is None else batch
    out: list[Outcome] = []
    for day, md_path in sorted(paths.items()):
        if not mine:
            break
        try:
            item = load_publication(repo, day, lang, md_path, archive)
        except PublishError as exc:
            out.extend(Outcome(t.name, repo, day, "failed", str(exc)) for t in mine)
            continue
        for t in mine:
            if not is_batched(t.target.publisher):
                out.append(deliver_one(store, t, item, force=force, dry_run=dry_run))
            elif (skipped := _already_there(store, t, item, force=force)) is not None:
                out.append(skipped)
            else:
                held.add(t, item)
    if own:
        out.extend(held.flush(store, dry_run=dry_run))
    return out
