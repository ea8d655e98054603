"""repoherald: daily reports of what changed in the repositories a team depends on.

The library API. A scheduler or a notebook uses it exactly as the CLI does::

    from repoherald import build_settings, run
    result = run(build_settings(repos=("https://github.com/vllm-project/vllm",), day="yesterday"))

``run`` takes :class:`Settings` and optional event subscribers; the stage
protocols (:class:`Source`, :class:`Publisher`) are what a new backend
implements; every error the library raises is a :class:`RepoheraldError`.
"""

from __future__ import annotations

__version__ = "0.1.0"

# The imports below need __version__ (the pipeline stamps reports with it).
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
from repoherald.publish.base import Delivery, Publication, Publisher
from repoherald.sources.base import Source, SourceContext, SourceInfo

__all__ = [
    "ConfigError",
    "Delivery",
    "Event",
    "Publication",
    "PublishError",
    "Publisher",
    "RepoheraldError",
    "RunResult",
    "Settings",
    "Source",
    "SourceContext",
    "SourceError",
    "SourceInfo",
    "StoreError",
    "UsageError",
    "__version__",
    "build_settings",
    "run",
]
