"""The decision model on OpenAI-compatible inference servers: the backend (`backend`), the completions API as it
uses it (`completions`) and the HTTP server pool (`pool`). Part of `shelfwise.core.models` (its import rules).
"""
