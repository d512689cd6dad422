"""Everything that runs a model: the `DecisionBackend` protocol and its cost/cancel types (`backend`), the
llama.cpp engine and backend (`llama_*`), the OpenAI-compatible remote backend (`remote`), the deterministic
fake for logic tests (`fake`), the sentence embedder and its torch-free GGUF converter (`embedder`,
`embed_convert`), the bundled-model assembly (`bundled`), prompt templates (`prompts`) and the factory that picks
a backend from settings (`factory`). May import `shelfwise.core.paths` and `shelfwise.core.settings`; never the
store, navigation, answers or a front end.
"""
