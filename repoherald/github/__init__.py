"""The GitHub REST API: one client (ETags, pagination, rate limits) and the calls built on it."""
