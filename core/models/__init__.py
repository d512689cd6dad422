"""Everything that runs a model: the `DecisionBackend` protocol and its cost/cancel types (`backend`), the
llama.cpp engine and backend (`llama_*`), the OpenAI-compatible remote backend (`remote`), the deterministic
fake for logic tests (`fake`), the sentence embedder and its torch-free GGUF converter (`embedder`,
`embed_convert`), the bundled-model assembly (`bundled`), prompt templates (`prompts`) and the factory that picks
a backend from settings (`factory`). May import `shelfwise.core.paths` and `shelfwise.core.settings`; never the
store, navigation, answers or a front end.
"""

import os

# llama.cpp's CPU backend (an OpenMP build) meets its threads at a barrier for every operation of the graph, and
# libgomp spins up to 300,000 times there before it sleeps. When another process keeps a core busy, a spinning
# thread holds the core its partner needs: measured on the two-core machine, one answer that takes 1.36 s idle took
# 27-86 s beside a one-thread training job. With 2,000 spins it took 3.7 s beside that job and 1.30 s idle (0 spins,
# i.e. OMP_WAIT_POLICY=PASSIVE: 2.4-3.0 s beside it, 2.2 s idle). libgomp reads this when llama.cpp is first loaded,
# which is always after this package's import; a value the user set is kept. Embedding is unaffected (1,500 passages
# idle: 5.27 s with 2,000 spins, 5.18-5.38 s with the default).
os.environ.setdefault("GOMP_SPINCOUNT", "2000")
