"""Allow ``python -m repoherald``."""

from repoherald.cli import main

main()
