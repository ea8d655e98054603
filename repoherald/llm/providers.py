"""Presets for the common OpenAI-compatible providers: one word instead of three settings.

``provider = "deepseek"`` stands for the base URL, model and key variable a
DeepSeek user would otherwise look up and type. The values are the
providers' own documented defaults; anything set explicitly (``base_url``,
``model``, ``api_key_env``) still wins. Local servers (Ollama, vLLM, SGLang)
serve whatever model was loaded, so their presets name no model and need no
key: ``repoherald llm check`` lists what the server serves.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from repoherald.errors import UsageError


@dataclass(frozen=True, slots=True)
class Provider:
    """The defaults one provider's endpoint is reached with."""

    name: str
    base_url: str
    model: str | None
    """None for a local server: the model is whatever it was started with."""
    api_key_env: str | None
    """The variable the provider's own SDKs read the key from; None when no key is needed."""


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY"),
        Provider("openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
        Provider(
            "dashscope",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            "DASHSCOPE_API_KEY",
        ),
        Provider("ollama", "http://localhost:11434/v1", None, None),
        Provider("vllm", "http://localhost:8000/v1", None, None),
        Provider("sglang", "http://localhost:30000/v1", None, None),
    )
}
"""Every known provider, by the name ``provider`` takes."""


def provider(name: str) -> Provider:
    """The preset called ``name``; an unknown name is a usage error with a did-you-mean."""
    found = PROVIDERS.get(name.strip().lower())
    if found is not None:
        return found
    close = difflib.get_close_matches(name.strip().lower(), PROVIDERS, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise UsageError(
        f"unknown LLM provider {name!r}: {hint}use one of {', '.join(PROVIDERS)}"
        " (or set base_url and model for any other OpenAI-compatible endpoint)"
    )
