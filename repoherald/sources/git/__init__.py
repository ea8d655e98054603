"""Git backend: read a local repository or a shallow mirror of a remote with plumbing only."""
