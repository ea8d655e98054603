"""repoherald: daily reports of what changed in the repositories a team depends on.

The library API. A scheduler or a notebook uses it exactly as the CLI does::

    from repoherald import build_settings, run
    result = run(build_settings(repos=("https://github.com/vllm-project/vllm",), day="yesterday"))

``run`` is what ``repoherald report`` calls: one report over the repositories
and days asked for. :func:`run_all` is the scheduled job behind
``repoherald run``: one report per repository-day, catching up missed days,
and delivery to every ``[[publish]]`` target. Both take :class:`Settings`
and optional event subscribers. The stage protocols (:class:`Source`,
:class:`Publisher`, :class:`Analyser`) are what a plugin implements, and
:mod:`repoherald.plugins` finds plugins through their entry-point groups;
every error the library raises is a :class:`RepoheraldError`.
"""

from __future__ import annotations

from repoherald._version import __version__
from repoherald.analysers import Analyser, CommitAnalyser, DeepAnalyser
from repoherald.config import Settings, build_settings
from repoherald.errors import (
    ConfigError,
    PublishError,
    RepoheraldError,
    SourceError,
    StoreError,
    UsageError,
)
from repoherald.pipeline.events import Event
from repoherald.pipeline.run import RunResult, run
from repoherald.pipeline.service import ServiceResult, run_all
from repoherald.publish.base import Delivery, Publication, Publisher
from repoherald.sources.base import Source, SourceBackend, SourceContext, SourceInfo, SourceOptions

__all__ = [
    "Analyser",
    "CommitAnalyser",
    "ConfigError",
    "DeepAnalyser",
    "Delivery",
    "Event",
    "Publication",
    "PublishError",
    "Publisher",
    "RepoheraldError",
    "RunResult",
    "ServiceResult",
    "Settings",
    "Source",
    "SourceBackend",
    "SourceContext",
    "SourceError",
    "SourceInfo",
    "SourceOptions",
    "StoreError",
    "UsageError",
    "__version__",
    "build_settings",
    "run",
    "run_all",
]
