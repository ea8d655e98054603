"""Deliver repository-days to every ``[[publish]]`` target, exactly once, through the ledger.

The ledger (:mod:`repoherald.store.ledger`) remembers, per target,
repository and day, what was sent and its content hash. So a re-run of an
unchanged day sends nothing; a changed day is not posted to a chat again
unless forced (a group does not want two messages for one day), but is
edited in place where the target can (a GitHub issue); a target
that failed is recorded as failed and retried by the next run. One target's
failure never stops the others.

Each delivery is claimed in the store before it is sent
(:mod:`repoherald.store.claims`), in the transaction that reads the ledger:
a second process finds the claim and leaves the delivery to the first
(``busy``). A claim left by a killed process means the target may already
have the day: a publisher that can look (``finds_what_it_sent``, the GitHub
issue by its marker) delivers again and adopts what it finds; any other
(webhooks, e-mail) is reported ``uncertain`` — "may have been sent", an
error — and is sent again only with ``--force``. Never silently twice.

Days are read back from the configured archive's files (the store's
``reports`` table says which days were reported; see
:mod:`repoherald.publish.archive.archived`), so ``run`` and ``publish`` deliver the
same thing and ``publish`` never analyses anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from repoherald.errors import PublishError, StoreError
from repoherald.publish.archive.archived import recorded_reports
from repoherald.publish.base import (
    Delivery,
    Publication,
    Status,
    deliver,
    deliver_batch,
    is_batched,
)
from repoherald.publish.dry_run import preview
from repoherald.publish.registry import NamedTarget
from repoherald.publish.rollup import ends_week, is_quiet, week_ending, weekly_rollup
from repoherald.redact import redact
from repoherald.store.base import Store
from repoherald.store.claims import Decision, Verdict
from repoherald.store.ledger import LedgerStatus

CHANGED = "changed"
"""Outcome of a day whose report changed after it was sent to a chat: not sent again."""
DRY_RUN = "dry-run"
BUSY = "busy"
"""Outcome of a day another live process is delivering to the target: left to it."""
UNCERTAIN = "uncertain"
"""Outcome of a day a killed process may have sent: not sent again without ``--force``."""
SKIPPED = "skipped"
"""Outcome of a day without commits at a target without ``send_empty``: filed, not sent."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one repository-day at one target."""

    target: str
    repo: str
    day: date
    status: str
    """``sent``, ``unchanged``, ``changed``, ``busy``, ``uncertain``, ``failed`` or ``dry-run``."""
    message: str = ""
    size: int = 0

    @property
    def failed(self) -> bool:
        """True for a failure, and for "may have been sent": both need the operator."""
        return self.status in (Status.FAILED.value, UNCERTAIN)

    def line(self, *, status: bool = True) -> str:
        """One redacted line for the summary; ``status=False`` leaves the status word out
        (for a caller that already says "failed:")."""
        text = f"{self.target}: {self.repo} {self.day}"
        if (status or not self.failed) and self.status != UNCERTAIN:
            text += f": {self.status}"
        if self.status == CHANGED:
            text += " (the report changed since it was sent; --force sends it again)"
        elif self.status == UNCERTAIN:
            text += (
                f": may have been sent ({self.message}); check the target, then --force"
                " sends it again"
            )
        elif self.status == SKIPPED:
            text += " (no commits; send_empty = true in its [[publish]] table sends such days)"
        elif self.status == BUSY:
            text += f" ({self.message}; left to it)"
        elif self.status == DRY_RUN:
            text += f": {self.message}, {self.size} bytes"
        elif self.message and self.status != Status.SENT.value:
            text += f": {self.message}"
        elif self.status == Status.SENT.value and self.message.startswith(RECOVERED):
            text += f" ({self.message})"
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


def failed_days(store: Store, targets: Iterable[NamedTarget], repo: str) -> set[date]:
    """Days of ``repo`` to retry: their last delivery to one of ``targets`` failed, or it
    was interrupted (a claim left behind: the retry says "may have been sent")."""
    out: set[date] = set()
    for t in targets:
        for e in store.ledger_entries(target=t.name):
            if e.repo == repo and e.status is LedgerStatus.FAILED:
                out.add(e.day)
        out.update(c.day for c in store.claims(t.name) if c.repo == repo)
    return out


def _edits_in_place(target: NamedTarget) -> bool:
    """True for a publisher that edits what it sent (an issue) rather than sending again."""
    return bool(getattr(type(target.target.publisher), "edits_in_place", False))


def _finds_what_it_sent(target: NamedTarget) -> bool:
    """True for a publisher that looks for what it sent before sending (the issue marker),
    so delivering again after an interrupted attempt cannot send twice."""
    return bool(getattr(type(target.target.publisher), "finds_what_it_sent", False))


RECOVERED = "after an interrupted delivery"


def _claim(
    store: Store, target: NamedTarget, item: Publication, *, force: bool, dry_run: bool = False
) -> Verdict:
    """Claim ``item`` for ``target`` (or, for ``dry_run``, only say what a claim would find)."""
    how = store.peek_delivery if dry_run else store.claim_delivery
    return how(
        target.name,
        item.name,
        item.day,
        item.content_hash(),
        resend_changed=force or _edits_in_place(target),
        send_uncertain=force or _finds_what_it_sent(target),
    )


def _not_sent(target: NamedTarget, item: Publication, verdict: Verdict) -> Outcome:
    """The outcome of a delivery the verdict says not to make."""
    d, claim = verdict.decision, verdict.claim
    holder = "" if claim is None else claim.owner.describe()
    if d is Decision.BUSY:
        return Outcome(target.name, item.name, item.day, BUSY, f"being delivered by {holder}")
    if d is Decision.UNCERTAIN:
        at = "" if claim is None else claim.claimed_at.strftime("%Y-%m-%d %H:%M UTC")
        why = f"{holder} stopped while delivering it at {at}"
        return Outcome(target.name, item.name, item.day, UNCERTAIN, why)
    status = Status.UNCHANGED.value if d is Decision.UNCHANGED else CHANGED
    return Outcome(target.name, item.name, item.day, status)


@contextmanager
def _claimed(store: Store, target: NamedTarget, items: Sequence[Publication]) -> Iterator[None]:
    """Around a send: anything but a return (Ctrl-C, a bug) leaves the claims "may have
    been sent", since the request may have gone out."""
    try:
        yield
    except BaseException:
        for item in items:
            with suppress(StoreError):
                store.abandon_delivery(target.name, item.name, item.day)
        raise


def _record(
    store: Store, target: NamedTarget, item: Publication, result: Delivery, verdict: Verdict
) -> Outcome:
    """File ``result`` in the ledger for ``item``, release its claim, and say what happened."""
    failed = result.status is Status.FAILED
    store.settle_delivery(
        target.name,
        item.name,
        item.day,
        status=LedgerStatus.FAILED if failed else LedgerStatus.SENT,
        content=item.content_hash(),
        remote_id=result.remote_id,
        error=result.message if failed else "",
        still_uncertain=verdict.claim is not None or result.maybe_sent,
    )
    if result.maybe_sent:
        return Outcome(target.name, item.name, item.day, UNCERTAIN, result.message)
    status = Status.FAILED if failed else Status.SENT
    message = result.message
    if not failed and verdict.claim is not None:
        message = f"{RECOVERED} by {verdict.claim.owner.describe()}: {message}"
    return Outcome(target.name, item.name, item.day, status.value, message)


def deliver_one(
    store: Store, target: NamedTarget, item: Publication, *, force: bool, dry_run: bool
) -> Outcome:
    """Send ``item`` to ``target`` unless the ledger says it is already there, or another
    process is sending it, or a killed one may have (see the module's docstring)."""
    publisher: Any = target.target.publisher
    verdict = _claim(store, target, item, force=force, dry_run=dry_run)
    if verdict.decision is not Decision.SEND:
        return _not_sent(target, item, verdict)
    entry = verdict.entry
    if _edits_in_place(target) and entry is not None and entry.remote_id:
        item = replace(item, sent_as=entry.remote_id)
    if dry_run:
        return _dry_run(target, [item])[0]
    with _claimed(store, target, [item]):
        result = deliver(publisher, item)
    return _record(store, target, item, result, verdict)


@dataclass
class Batch:
    """Publications held back for targets that send one message per run (an e-mail digest).

    :func:`deliver_days` adds to it, repository after repository; :meth:`flush`
    sends each target's message once all are in and files every
    repository-day in the ledger under that one message's id.
    """

    pending: dict[str, tuple[NamedTarget, list[Publication]]] = field(default_factory=dict)
    force: bool = False
    """Send again what was sent before and changed, or may have been sent (``--force``)."""

    def add(self, target: NamedTarget, item: Publication) -> None:
        self.pending.setdefault(target.name, (target, []))[1].append(item)

    def flush(self, store: Store, *, dry_run: bool = False) -> list[Outcome]:
        """Send every held-back message (or measure it, for ``dry_run``) and empty the batch."""
        out: list[Outcome] = []
        for target, items in self.pending.values():
            if dry_run:
                out.extend(_dry_run(target, items))
                continue
            verdicts = [(item, _claim(store, target, item, force=self.force)) for item in items]
            out.extend(_not_sent(target, i, v) for i, v in verdicts if v.decision != Decision.SEND)
            mine = [(i, v) for i, v in verdicts if v.decision is Decision.SEND]
            if not mine:
                continue
            batched: Any = target.target.publisher
            with _claimed(store, target, [i for i, _ in mine]):
                result = deliver_batch(batched, [i for i, _ in mine])
            out.extend(_record(store, target, i, result, v) for i, v in mine)
        self.pending.clear()
        return out


def _dry_run(target: NamedTarget, items: list[Publication]) -> list[Outcome]:
    """One outcome per item of what sending ``items`` as one message would do."""
    try:
        what, size = preview(target, items)
    except PublishError as exc:
        return [Outcome(target.name, i.name, i.day, Status.FAILED.value, str(exc)) for i in items]
    return [Outcome(target.name, i.name, i.day, DRY_RUN, what, size) for i in items]


def _week(store: Store, repo: str, end: date, lang: str, archive: Path | None) -> Publication:
    """The roll-up of ``repo``'s week ending ``end``, from its archived days (a day whose
    files are missing counts as not reported, and the roll-up says how many were)."""
    loaded = {}
    for day, path in recorded_reports(store, repo, week_ending(end), lang).items():
        with suppress(PublishError):
            loaded[day] = load_publication(repo, day, lang, path, archive)
    return weekly_rollup(repo, end, lang, loaded)


def _skip(store: Store, target: NamedTarget, item: Publication, *, dry_run: bool) -> Outcome:
    """File a quiet day as skipped (not failed, so it is not retried); a day the target
    was already sent is left as it is."""
    entry = store.ledger_get(target.name, item.name, item.day)
    if not dry_run and (entry is None or entry.status is not LedgerStatus.SENT):
        store.ledger_record(
            target.name,
            item.name,
            item.day,
            status=LedgerStatus.SKIPPED,
            content=item.content_hash(),
        )
    return Outcome(target.name, item.name, item.day, SKIPPED)


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
    held = Batch(force=force) if batch is None else batch
    out: list[Outcome] = []
    for day, md_path in sorted(paths.items()):
        if not mine:
            break
        try:
            daily = load_publication(repo, day, lang, md_path, archive)
        except PublishError as exc:
            out.extend(Outcome(t.name, repo, day, "failed", str(exc)) for t in mine)
            continue
        for t in mine:
            weekly = t.target.weekly_on
            if weekly is None:
                item = daily
            elif not ends_week(day, weekly):
                continue  # a weekly target gets no daily message
            else:
                item = _week(store, repo, day, lang, archive)
            if not t.target.send_empty and is_quiet(item):
                out.append(_skip(store, t, item, dry_run=dry_run))
                continue
            if not is_batched(t.target.publisher):
                out.append(deliver_one(store, t, item, force=force, dry_run=dry_run))
                continue
            verdict = _claim(store, t, item, force=force, dry_run=True)
            if verdict.decision is Decision.SEND:
                held.add(t, item)  # claimed when the batch is flushed
            else:
                out.append(_not_sent(t, item, verdict))
    if own:
        out.extend(held.flush(store, dry_run=dry_run))
    return out
