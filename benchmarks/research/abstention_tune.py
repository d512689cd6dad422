"""Choose when an answer says "not found in your documents", on the ConditionalQA TUNE half only.

Walks every tune-half question with a gold answer or marked ``not_answerable`` (the evaluation collection
``shelfwise eval conditionalqa`` built), and prints, for thresholds on the two evidence signals (the best shown
passage's query cosine, ``cos_max``; the walk's P(relevant) of its top passage), how many not-answerable questions
would abstain against how many answerable ones would wrongly abstain. The rule kept per encoder in
``core/answers/tuning.py`` (``found_min_cosine``, ``abstain_max_p``) abstains most on not-answerable questions while
abstaining on at most 10% of answerable ones (for EmbeddingGemma: of the tune half's and the sample's answerable
questions together; docs/eval/embeddinggemma.md). Run it with the encoder whose values you choose (the evaluation
collection is built with the default encoder; ``SHELFWISE_HOME`` keeps one per encoder apart).

    .venv/bin/python benchmarks/research/abstention_tune.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shelfwise.core.answers.answer import passage_cosines
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.evaluation.datasets import load_conditionalqa
from shelfwise.evaluation.run import EVAL_DB_VERSION, shared_dir


def main() -> None:
    ds = load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=False, split="tune")
    feats: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    with Shelf(Settings(db_path=Path("/tmp/unused-shelf.db"))) as shelf:
        store = Store(data_dir() / "eval" / f"conditionalqa-v{EVAL_DB_VERSION}.db")
        parts = LibraryWalk(store, shelf.models, collection=ds.name)
        for q in ds.questions:
            if not (q.answers or q.not_answerable):
                continue
            r = parts.search(clipped_request(q.query, None, parts.backend))
            hits = r.hits[:5]
            cos = passage_cosines(r, hits)
            feats[q.not_answerable].append((max(cos.values(), default=0.0), hits[0].score if hits else 0.0))
        store.close()
    un, ans = np.array(feats[True]), np.array(feats[False])
    print(f"{len(un)} not answerable, {len(ans)} answerable (tune half)")
    for col, name in ((0, "best passage cosine"), (1, "top passage P(relevant)")):
        print(name)
        cuts = np.unique(np.round(np.concatenate([un[:, col], np.percentile(ans[:, col], [2, 5, 10, 20])]), 3))
        for t in cuts:
            a, f = int((un[:, col] < t + 1e-6).sum()), int((ans[:, col] < t + 1e-6).sum())
            print(f"  < {t:.3f}: abstains on {a}/{len(un)} not answerable, {f}/{len(ans)} answerable "
                  f"({f / len(ans):.3f})")


if __name__ == "__main__":
    main()
