"""The walk down the tree (DecisionRAG Algorithm 1): per-node evidence (`features`), the decision model that turns
evidence into one P(relevant) per candidate (`decision`), its self-calibration on probe queries (`calibrate`),
the topic hierarchy and embedding index built after ingest (`hierarchy`, `index`), the navigator itself
(`navigator`, with `parallel` for a level's concurrent requests and `prompts` for its listings), per-process
caches (`snapshots`) and the trace/answer dataclasses every front end renders (`trace`). May import
`shelfwise.core.store`, `shelfwise.core.models` and the parsed-document types of `shelfwise.ingest.model`; never
answers, evaluation or a front end.
"""
