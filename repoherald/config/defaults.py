"""Default values and shapes shared by the configuration file and the settings built from it."""

from __future__ import annotations

import re
from typing import Literal

DEFAULT_TZ = "Asia/Shanghai"
DEFAULT_LANG = "zh"
DEFAULT_OUT = "reports"
DEFAULT_PATH_TEMPLATE = "{year}/{name}/{date}"
CONFIG_FILE_NAME = "repoherald.toml"

Lang = Literal["zh", "en"]

DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_GITHUB_TOKEN_ENV = "GITHUB_TOKEN"
GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
"""``owner/name`` as GitHub allows them (no path tricks such as ``..``)."""
