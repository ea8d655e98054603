"""The stage order: source -> facts -> rules -> (LLM) -> store -> render -> publish."""

from repoherald.pipeline.run import RunResult, Window, run

__all__ = ["RunResult", "Window", "run"]
