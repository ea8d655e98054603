"""A downstream project's use of its upstreams, and the lines a commit touches there."""
