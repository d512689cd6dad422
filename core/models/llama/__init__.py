"""The decision model in process on llama.cpp: the engine (model, one multi-sequence context, prefix reuse), the
backend on top of it (binary, likelihood, generation), the batch helpers, the KV-state cache, the bundled
Gemma GGUF, and the routing of llama.cpp's own log. Part of `shelfwise.core.models` (its import rules).
"""
