"""Delivery for ``run`` and ``publish`` alike: the archive as the first target, then the rest.

The archive is not special to the pipeline: it is the publisher registered
as ``archive``, built through the registry like every ``[[publish]]``
target, from ``[report] out`` and ``[report] path`` (the one place it is
configured). :func:`deliver_repository` is the one delivery loop: ``run``
calls it after reporting a repository (retrying what failed before), and
``publish`` for the days asked for, so both deliver the same archived file
(chosen by :mod:`repoherald.publish.archive.archived`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

from repoherald.config.settings import Settings
from repoherald.errors import ConfigError
from repoherald.pipeline.identity import RepoIdentity
from repoherald.publish.archive.archived import Archive, archived_reports
from repoherald.publish.archive.publisher import ArchivePublisher
from repoherald.publish.deliver import Batch, Outcome, deliver_days, failed_days
from repoherald.publish.registry import NamedTarget, create
from repoherald.store.base import Store


def archive_publisher(settings: Settings) -> ArchivePublisher:
    """The archive at ``[report] out``, through the publisher registry.

    ``run`` writes each report there first and records it once its pair has
    landed; it needs the archive's own methods (its paths, its batch), so a
    publisher registered as ``archive`` that is not one is a configuration error.
    """
    table = {
        "type": "archive",
        "out": settings.out_dir,
        "path": settings.path_template,
        "index_lang": settings.lang,  # file names keep zh as the untagged language
    }
    publisher = create(table, where="report").publisher
    if not isinstance(publisher, ArchivePublisher):
        raise ConfigError(
            f"the publisher registered as 'archive' ({type(publisher).__name__}) does not"
            " write repoherald's archive: remove the plugin that registers that type"
        )
    return publisher


def archive_of(settings: Settings) -> Archive:
    """Where delivery reads the reports from: the archive ``run`` writes."""
    return Archive(settings.out_dir, settings.path_template)


@dataclass(frozen=True, slots=True)
class RepoDelivery:
    """What delivering one repository's days did."""

    outcomes: list[Outcome]
    found: tuple[date, ...]
    """The days that had a report to deliver."""


def deliver_repository(
    store: Store,
    targets: Iterable[NamedTarget],
    repo: RepoIdentity,
    days: Iterable[date],
    lang: str,
    archive: Archive,
    *,
    say: Callable[[str], None],
    retry_failed: bool = False,
    force: bool = False,
    dry_run: bool = False,
    batch: Batch | None = None,
) -> RepoDelivery:
    """Deliver ``repo``'s archived reports of ``days`` to every target that takes them.

    ``retry_failed`` adds the days whose last delivery to one of ``targets``
    failed or was interrupted (``run`` retries them; ``publish`` delivers only
    what it is asked). ``say`` gets one line per day where the store's record
    and the archive disagree, before anything is sent. Days for a batched
    target go into ``batch`` (see :func:`~repoherald.publish.deliver.deliver_days`).
    """
    chosen = tuple(targets)
    wanted = set(days)
    if retry_failed:
        wanted |= failed_days(store, chosen, repo.key)
    found = archived_reports(store, repo.key, wanted, lang, archive)
    for note in found.notes:
        say(note)
    outcomes = deliver_days(
        store,
        chosen,
        repo.key,
        found.paths,
        lang,
        force=force,
        dry_run=dry_run,
        batch=batch,
        archive=archive.out,
    )
    return RepoDelivery(outcomes, tuple(sorted(found.paths)))
