"""Rendering of reports (Markdown and friends)."""
