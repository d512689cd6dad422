"""Everything that runs a model, by family:

- `backend`: the protocols every family implements (`DecisionBackend`, `RelevanceJudge`), their cost/cancel/error
  types, and the vector-cache key (`text_sha`); `factory` picks the decision backend the settings name;
- `llama/`: the decision model in process on llama.cpp (`engine`, `backend`, `batch`, `state_cache`), the bundled
  model file (`bundled`) and where llama.cpp's own log goes (`logs`);
- `remote/`: the decision model on OpenAI-compatible servers (`backend`, `completions`, the server `pool`);
- `encoders/`: the sentence `embedder`, the relevance judges (`cross_encoder`, `judges` with `make_judge`), the
  llama.cpp encoder they share (`llama_encoder`) and the torch-free GGUF converter (`convert`);
- shared by the decision backends: pure prompt texts, request planning and readout maths (`prompts`), the one
  streaming-generation loop (`generation`), and the deterministic `fake` for logic tests.

May import `shelfwise.core.paths` and `shelfwise.core.settings`; never the store, navigation, answers or a front
end.
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
