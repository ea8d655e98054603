"""The ``github_issue`` publisher: one issue per repository-day, split to GitHub's limits."""
