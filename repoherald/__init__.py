"""repoherald: daily reports of what changed in the repositories a team depends on."""

__version__ = "0.1.0"
