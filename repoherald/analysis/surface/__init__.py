"""The changed surface of a commit: names, signatures, flags and environment variables."""
