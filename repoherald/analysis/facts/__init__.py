"""Facts read from one commit's message and diff: manifests, references, pins, operators."""
