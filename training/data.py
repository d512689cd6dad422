"""Training groups for the relevance judge, built from ../shared/traindata only (see its README).

Every group is one question with one positive text and ``size - 1`` negatives: first passages of the SAME document
(hard negatives), then passages of other documents of the same set (easy negatives, for sets with few same-document
negatives: MedQuAD, PubMedQA). Texts are shaped like the walk's passage decisions at run time
(``core/indexing/vectors.embedding_text``): ``"Title > Heading: text"``, with the title taken from the record, or
for gov.uk pages without one from the URL slug.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

#: Sets whose licence allows shipping a derived model (the default judge trains on these only).
PERMISSIVE = ("medquad", "covidqa", "covid_faq", "pubmedqa_l", "or_sharc")
#: ConditionalQA train says "ONLY for NLP research": research variant only, never shipped by default.
RESEARCH = ("conditionalqa_train",)

_FILES = {
    "medquad": "medquad/derived/pairs.jsonl.gz",
    "covidqa": "covidqa/derived/pairs.jsonl.gz",
    "covid_faq": "covidqa/derived/faq_pairs.jsonl.gz",
    "pubmedqa_l": "pubmedqa_l/derived/pairs.jsonl.gz",
    "or_sharc": "or_sharc/derived/pairs.jsonl.gz",
    "conditionalqa_train": "conditionalqa_train/derived/pairs.jsonl.gz",
}

_MD_HEAD = re.compile(r"^\s*#+\s*[^\n]*\n+")


@dataclass(frozen=True)
class Record:
    source: str
    question: str
    title: str
    positives: tuple[str, ...]
    negatives: tuple[str, ...]  # same document


@dataclass(frozen=True)
class Group:
    query: str
    texts: tuple[str, ...]  # texts[0] is the positive


def squash(s: str) -> str:
    return " ".join(s.split())


def _title(rec: dict) -> str:
    if rec.get("doc_title"):
        return squash(rec["doc_title"])
    doc = str(rec.get("doc_id") or "")
    if doc.startswith("http"):
        slug = doc.rstrip("/").rsplit("/", 1)[-1].replace("-", " ")
        return slug[:1].upper() + slug[1:]
    return ""


def _shape(title: str, heading: str | None, text: str) -> str:
    head = " > ".join(p for p in (title, squash(heading or "")) if p)
    body = squash(_MD_HEAD.sub("", text) if heading else text)
    return f"{head}: {body}" if head else body


def _answer_window(text: str, answer: str, words: int = 60) -> str:
    """CovidQA chunks are ~150 words: keep a window around the answer so the evidence survives the token cap."""
    i = text.find(answer.strip()[:40]) if answer else -1
    if i < 0:
        return text
    toks = text.split()
    start_word = len(text[:i].split())
    lo = max(0, start_word - words // 3)
    return " ".join(toks[lo : lo + words])


def load_records(root: Path, sets: tuple[str, ...]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for name in sets:
        path = root / _FILES[name]
        recs: list[Record] = []
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r.get("not_answerable") or not r["positives"]:
                    continue
                title = _title(r)
                heads = r.get("positive_headings") or [None] * len(r["positives"])
                pos = []
                for p, h in zip(r["positives"], heads, strict=False):
                    if name == "covidqa" and r.get("answer_text"):
                        p = _answer_window(p, r["answer_text"])
                    pos.append(_shape(title, h, p))
                negs = [_shape(title, None, n) for n in r["negatives"]]
                if name == "pubmedqa_l":  # no same-document negatives: MeSH-neighbour abstracts of other papers
                    negs = [squash(n) for n in r.get("xdoc_negatives", [])]
                recs.append(Record(name, squash(r["question"]), title, tuple(pos), tuple(negs)))
        out[name] = recs
    return out


class GroupSampler:
    """Endless seeded stream of groups; sets drawn by ``weights`` (MedQuAD dominates by count otherwise)."""

    def __init__(self, records: dict[str, list[Record]], weights: dict[str, float], size: int, seed: int) -> None:
        self.records = {k: v for k, v in records.items() if v}
        names = list(self.records)
        w = [weights.get(n, 1.0) for n in names]
        tot = sum(w)
        self.names, self.probs = names, [x / tot for x in w]
        self.size = size
        self.rng = random.Random(seed)

    def __iter__(self) -> GroupSampler:
        return self

    def __next__(self) -> Group:
        rng = self.rng
        name = rng.choices(self.names, self.probs)[0]
        recs = self.records[name]
        rec = rng.choice(recs)
        texts = [rng.choice(rec.positives)]
        pos_set = set(rec.positives)
        hard = [n for n in rec.negatives if n not in pos_set]
        rng.shuffle(hard)
        texts += hard[: self.size - 1]
        while len(texts) < self.size:
            other = rng.choice(recs)
            if other.title == rec.title and other.title:
                continue
            cand = rng.choice(other.positives + other.negatives)
            if cand not in pos_set:
                texts.append(cand)
        return Group(rec.question, tuple(texts))
