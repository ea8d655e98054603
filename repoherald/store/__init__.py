"""The SQLite store: cache of facts and analyses, and a log of runs."""
