"""The public API of Python modules: parsed, outlined incrementally, cached by blob."""
