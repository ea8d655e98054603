"""The ``webhook`` publisher: chat digests, their payloads, pacing and report links."""
