"""Pure, I/O-free analysers that turn file contents into facts about a commit."""
