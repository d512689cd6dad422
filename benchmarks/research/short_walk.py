"""The sentences a walk would show for the TRAINING questions, with the walk's evidence (issue 48, session 23): the
items ``short_show.py`` fits the show/withhold confidence on.

A stand-in for the walk, not the walk: the training documents are not ingested into libraries (COVID-QA's papers and
ConditionalQA's guides would take hours of encoder time on the shared CPU), so each question is asked of its own
document's passages as the training data cuts them, and the walk's last level is played by what it mostly reads:

* the passages: COVID-QA, the paper's ~150-word chunks of ``covidqa/derived/pairs.jsonl.gz`` (the one holding the
  answer and 20 others of the same paper); ConditionalQA TRAIN, the guide's evidence items (the question's own and
  up to 20 of other questions on the same guide, ``conditionalqa_train/derived/pairs.jsonl.gz``);
* the walk's passages shown: the :data:`HITS` of them holding most of the question's words (idf-weighted, the
  walk's lexical evidence, ``extractive.word_overlap``), in the order of the encoder's cosine of the question with
  each passage (the walk's main evidence, what ``answer.passage_cosines`` reads off its last level);
* the sentences shown: the product's own ``extractive.extract_answer`` over those passages with the encoder's
  scorer (EmbeddingGemma, the question through ``embed_query``, the sentences through ``embed``, as
  ``sentence_vectors.cached_scorer``), so each sentence carries the product's ``cosine`` and ``lead``.

The questions: every COVID-QA and ConditionalQA TRAIN question asking for a value whose gold has at most 5 words
(``short_tune.MAX_GOLD_WORDS``), and every :data:`YES_NO_STEP`-th ConditionalQA TRAIN yes/no question (``--sets
pubmedqa``: every :data:`YES_NO_STEP`-th of PubMedQA's labelled questions decided yes or no, over its abstract's
sections and conclusion; ``--sets faq``: every yes/no question of COVID-QA's FAQ pages in English, German or French
whose answer opens with a yes or no, that word cut off, over the page's answers), in an order
that mixes the sets (what is written so far, every 50 items, is a sample of the whole). Vectors are cached by text
in ``--cache`` (a rerun embeds nothing it has). Writes one item per question to ``--out``:

    nice -n 19 .venv/bin/python benchmarks/research/short_walk.py --out /work/s23/answers/walk-items.json
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import html
import json
import pickle
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from short_tune import MAX_GOLD_WORDS, TRAIN, cqa_span_questions

from shelfwise.core.answers.extractive import extract_answer, word_overlap
from shelfwise.core.models.backend import Embedder
from shelfwise.core.navigation.trace import Hit, Location

HITS = 5  # passages shown by the walk (Settings.answer_passages)
YES_NO_STEP = 3  # every third yes/no question of ConditionalQA TRAIN (1,207 in all; encoder time)


class Vectors:
    """The encoder's vectors, cached by text (questions apart: ``embed_query`` adds EmbeddingGemma's query
    prompt)."""

    def __init__(self, embedder: Embedder, cache: Path) -> None:
        self.embedder = embedder
        self.cache = cache
        self.vectors: dict[str, np.ndarray] = pickle.loads(cache.read_bytes()) if cache.exists() else {}
        self.fresh = 0

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        need = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if need:
            self.vectors.update(zip(need, np.asarray(self.embedder.embed(need), np.float32), strict=True))
            self.fresh += len(need)
        return np.stack([self.vectors[t] for t in texts])

    def query(self, question: str) -> np.ndarray:
        key = "q:" + question
        if key not in self.vectors:
            self.vectors[key] = np.asarray(self.embedder.embed_query(question), np.float32)
            self.fresh += 1
        return self.vectors[key]

    def scorer(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.documents(list(texts)) @ self.query(question) if texts else np.zeros(0, np.float32)

    def save(self) -> None:
        self.cache.write_bytes(pickle.dumps(self.vectors))


def _plain(text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def covidqa_questions() -> list[dict[str, Any]]:
    out = []
    for r in (json.loads(line) for line in gzip.open(TRAIN / "covidqa" / "derived" / "pairs.jsonl.gz", "rt",
                                                      encoding="utf-8")):
        gold = (r.get("answer_text") or "").strip()
        if not gold or len(gold.split()) > MAX_GOLD_WORDS:
            continue
        out.append({"set": "covidqa", "question": r["question"].strip(), "gold": gold, "doc": r["doc_id"],
                    "pool": [*r["positives"], *r["negatives"]]})
    return out


def cqa_questions() -> list[dict[str, Any]]:
    pairs = {r["id"]: r for r in (json.loads(line) for line in gzip.open(
        TRAIN / "conditionalqa_train" / "derived" / "pairs.jsonl.gz", "rt", encoding="utf-8"))}
    out = []
    for x, question, gold, texts in cqa_span_questions():
        negatives = pairs.get(x.get("id", ""), {}).get("negatives", [])
        out.append({"set": "conditionalqa", "question": question, "gold": gold, "doc": x["url"],
                    "pool": [*texts, *negatives]})
    raw = json.loads((TRAIN / "conditionalqa_train" / "original" / "train.json").read_text(encoding="utf-8"))
    yes_no = []
    for x in raw:
        answers = ast.literal_eval(x["answers"]) if isinstance(x["answers"], str) else x["answers"]
        if not answers or answers[0][0].lower() not in ("yes", "no"):
            continue
        evidences = ast.literal_eval(x["evidences"]) if isinstance(x["evidences"], str) else x["evidences"]
        negatives = pairs.get(x["id"], {}).get("negatives", [])
        yes_no.append({"set": "conditionalqa", "question": f"{x['scenario'].strip()} {x['question'].strip()}".strip(),
                       "gold": answers[0][0].lower(), "doc": x["url"], "yes_no": True,
                       "pool": [*(_plain(e) for e in evidences), *negatives]})
    return out + yes_no[::YES_NO_STEP]


def pubmedqa_questions() -> list[dict[str, Any]]:
    """PubMedQA's labelled questions decided yes or no (not "maybe"), every :data:`YES_NO_STEP`-th: the abstract's
    sections and its conclusion are the passages."""
    out = []
    for r in (json.loads(line) for line in gzip.open(TRAIN / "pubmedqa_l" / "derived" / "pairs.jsonl.gz", "rt",
                                                      encoding="utf-8")):
        if r["final_decision"] not in ("yes", "no"):
            continue
        contexts = ast.literal_eval(r["contexts"]) if isinstance(r["contexts"], str) else r["contexts"]
        positives = ast.literal_eval(r["positives"]) if isinstance(r["positives"], str) else r["positives"]
        out.append({"set": "pubmedqa", "question": r["question"].strip(), "gold": r["final_decision"],
                    "doc": r["doc_id"], "yes_no": True, "pool": [*(c["text"] for c in contexts), *positives]})
    return out[::YES_NO_STEP]


# the first word of an FAQ answer that answers its yes/no question outright ("Ja, ...", "No. ..."), in the languages
# whose negations ``short.polarity`` reads (a "Nie." in Polish would teach the gate about a reader that is not there)
FAQ_OPENER = re.compile(r"^\W*(yes|no|ja|nein|oui|non)\b\s*[,.!:;\u2013-]?\s*", re.I)
FAQ_LANGUAGES = ("en", "de", "fr")


def faq_questions() -> list[dict[str, Any]]:
    """The yes/no questions of COVID-QA's FAQ pages (``covidqa/derived/faq_pairs.jsonl.gz``: government and health
    agencies' FAQs, a policy statement answering a plain question) whose answer opens with a yes or no
    (:data:`FAQ_OPENER`, in :data:`FAQ_LANGUAGES`): the gold is that word, and it is cut from every answer of the
    page, so the sentences left must settle the question by what they say. The passages: the answer and the page's
    other answers."""
    out = []
    for r in (json.loads(line) for line in gzip.open(TRAIN / "covidqa" / "derived" / "faq_pairs.jsonl.gz", "rt",
                                                      encoding="utf-8")):
        if r.get("lang") not in FAQ_LANGUAGES:
            continue
        positives = ast.literal_eval(r["positives"]) if isinstance(r["positives"], str) else r["positives"]
        negatives = ast.literal_eval(r["negatives"]) if isinstance(r["negatives"], str) else r["negatives"]
        opener = FAQ_OPENER.match(positives[0])
        answer = positives[0][opener.end():].strip() if opener else ""
        if not opener or len(answer.split()) < 3:
            continue
        gold = "yes" if opener.group(1).lower() in ("yes", "ja", "oui") else "no"
        out.append({"set": "covid_faq", "question": r["question"].strip(), "gold": gold, "doc": r["doc_id"],
                    "yes_no": True, "lang": r["lang"],
                    "pool": [answer, *(FAQ_OPENER.sub("", n, count=1).strip() for n in negatives)]})
    return out


SETS = {"covidqa": covidqa_questions, "conditionalqa": cqa_questions, "pubmedqa": pubmedqa_questions,
        "faq": faq_questions}


def _hit(text: str, n: int) -> Hit:
    return Hit(node_id=n, document_id=0, text=text, score=0.0, path="", title="", heading_path=[],
               location=Location())


def walk(item: dict[str, Any], vectors: Vectors) -> dict[str, Any]:
    """The stand-in walk for one question (see the module doc): its passages shown, their cosines, the sentences."""
    pool = [p for p in dict.fromkeys(item["pool"]) if p.strip()]
    lexical = word_overlap(item["question"], pool)
    near = [pool[i] for i in np.argsort(-lexical, kind="stable")[:HITS]]
    cos = vectors.scorer(item["question"], near)
    order = [int(i) for i in np.argsort(-cos, kind="stable")]
    hits = [_hit(near[i], n) for n, i in enumerate(order, 1)]
    found = extract_answer(item["question"], hits, vectors.scorer)
    return {k: v for k, v in item.items() if k != "pool"} | {
        "passages": [h.text for h in hits], "passage_cos": [round(float(cos[i]), 5) for i in order],
        "sentences": [{"text": s.text, "number": s.number, "start": s.start, "end": s.end, "score": s.score,
                       "header": s.header, "cosine": s.cosine, "lead": s.lead} for s in found]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/walk-items.json"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/short-walk-vectors.pkl"))
    ap.add_argument("--limit", type=int, default=0, help="at most this many questions (0: all)")
    ap.add_argument("--sets", default="covidqa,conditionalqa", help=f"of {', '.join(SETS)}")
    ap.add_argument("--batch-tokens", type=int, default=256, help="the encoder's batch (throughput only)")
    args = ap.parse_args()
    from shelfwise.core.models.encoders.embedder import Embedder as Encoder

    vectors = Vectors(Encoder(None, batch_tokens=args.batch_tokens), args.cache)
    # in an order that mixes the sets (a fixed hash of the question), so that the items written so far (every 50)
    # are a sample of all of them
    items = sorted((item for name in args.sets.split(",") for item in SETS[name]()),
                   key=lambda x: hashlib.sha256(x["question"].encode("utf-8")).hexdigest())
    if args.limit:
        items = items[: args.limit]
    print(f"{len(items)} questions", flush=True)
    out, t0 = [], time.perf_counter()
    for i, item in enumerate(items):
        out.append(walk(item, vectors))
        if i % 50 == 49:
            vectors.save()
            args.out.write_text(json.dumps(out))
            print(f"{i + 1}/{len(items)} {time.perf_counter() - t0:.0f} s, {vectors.fresh} vectors made", flush=True)
    vectors.save()
    args.out.write_text(json.dumps(out))
    print(f"done: {len(out)} items in {time.perf_counter() - t0:.0f} s ({vectors.fresh} vectors made)")


if __name__ == "__main__":
    main()
