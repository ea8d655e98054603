"""LLM analysis through any OpenAI-compatible endpoint: client, schema, prompts, fact-check.

The only package that talks to a model. It takes the rules' facts and verdict
as evidence and returns an :class:`~repoherald.models.Analysis`; everything it
claims is checked against the diff before it reaches a report.
"""
