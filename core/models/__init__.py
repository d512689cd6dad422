"""Everything that runs a model, by family:

- `backend`: the protocols every family implements (`DecisionBackend`, `RelevanceJudge`), their cost/cancel/error
  types, and the vector-cache key (`text_sha`); `factory` picks the decision backend the settings name;
- `llama/`: the decision model in process on llama.cpp (`engine`, `backend`, `batch`, `state_cache`), the bundled
  model file (`bundled`) and where llama.cpp's own log goes (`logs`);
- `remote/`: the decision model on OpenAI-compatible servers (`backend`, `completions`, one
  server's HTTP `client`; embedder, judge and the local `fallback` too);
- `encoders/`: the sentence `embedder`, the relevance judges (`cross_encoder`, `judges` with `make_judge`), the
  llama.cpp encoder they share (`llama_encoder`) and the torch-free GGUF converter (`convert`);
- shared by the decision backends: pure prompt texts, request planning and readout maths (`prompts`), the one
  streaming-generation loop (`generation`), and the deterministic `fake` for logic tests;
- `report`: what `shelfwise models` shows and checks (through the facade's `models_report`, `core/api/models.py`).

May import `shelfwise.core.paths` and `shelfwise.core.settings`; never the store, navigation, answers or a front
end.
"""
