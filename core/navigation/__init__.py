"""The walk down the tree (DecisionRAG Algorithm 1): per-node evidence (`features`), the decision model that turns
evidence into one P(relevant) per candidate (`decision`), its self-calibration on probe queries (`calibrate`),
the navigator itself (`navigator`, with `parallel` for a level's concurrent requests and `readout_prompts` for what
the models read), per-process caches (`snapshots`), the search dataclasses every front end renders (`trace`) and
the look-ups that show what a search found (`lookup`: a passage's neighbours, a walk row as a passage).
The index it walks is built by `shelfwise.core.indexing`. May import
`shelfwise.core.store`, `shelfwise.core.models` and the parsed-document types of `shelfwise.ingest.model`; never
answers, evaluation or a front end.
"""
