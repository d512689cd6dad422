"""Evaluation collections made from ``../shared/traindata`` (the only data the combiner's weights may be tuned on).

Each set's ``derived/pairs.jsonl.gz`` (see its README) becomes an :class:`EvalSet`: one document per ``doc_id``,
made of every passage its records name (positives and the same-document negatives, deduplicated, in reading order
where the record says it: COVID-QA chunk ids, MedQuAD question numbers, OR-ShARC snippet ids), and one question
per record with gold = its positives. Sections where the set has them: OR-ShARC snippets under their Markdown
heading, PubMedQA abstracts by their labelled parts (BACKGROUND, METHODS, ..., the gold CONCLUSIONS); COVID-QA
papers and MedQuAD documents are flat (document = section). OR-ShARC questions are asked with their first scenario
in front (as ConditionalQA's are), so the question-sentence evidence has a second collection to be measured on.

``shelfwise eval traindata:covidqa --limit 300``; sets: covidqa, medquad, pubmedqa, orsharc. COVID-QA, MedQuAD and
PubMedQA are sampled by document (``SAMPLE_DOCS``, seeded).
"""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

from shelfwise.evaluation.datasets import EvalDocument, EvalQuestion, EvalSet, GoldPassage
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode

SETS = {"covidqa": "covidqa", "medquad": "medquad", "pubmedqa": "pubmedqa_l", "orsharc": "or_sharc"}
# Documents sampled per set (seeded; every question of a sampled document is kept): enough questions for a
# held-out score, small enough to embed on two cores. OR-ShARC is used whole (120 pages).
SAMPLE_DOCS = {"covidqa": 40, "medquad": 300, "pubmedqa": 200}
_HEAD = re.compile(r"^\s*#+\s*([^\n]+)\n+")
_QNUM = re.compile(r"-(\d+)$")


def _squash(s: str) -> str:
    return " ".join(s.split())


def _title(rec: dict) -> str:
    if rec.get("doc_title"):
        return _squash(rec["doc_title"])
    doc = str(rec.get("doc_id") or "")
    if doc.startswith("http"):
        slug = doc.rstrip("/").rsplit("/", 1)[-1].replace("-", " ")
        return slug[:1].upper() + slug[1:]
    if rec.get("contexts"):  # PubMedQA has no titles: the question's abstract is named by its first words
        first = rec["contexts"][0]["text"].split()
        return " ".join(first[:10]) + ("..." if len(first) > 10 else "")
    return doc


def _split_heading(text: str) -> tuple[str | None, str]:
    """OR-ShARC snippets start with their Markdown heading: (heading, body)."""
    m = _HEAD.match(text)
    if not m:
        return None, text.strip()
    return _squash(m.group(1)), text[m.end():].strip()


class _Doc:
    """Passages of one document as the records name them: text -> (order key, section heading)."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.passages: dict[str, tuple[tuple[float, int], str | None]] = {}

    def add(self, text: str, heading: str | None, order: float | None) -> None:
        key = (order if order is not None else float("inf"), len(self.passages))
        old = self.passages.get(text)
        if old is None or key[0] < old[0][0]:
            self.passages[text] = (key if old is None else (key[0], old[0][1]), heading)

    def build(self) -> tuple[ParsedDocument, dict[str, int]]:
        """The parsed tree, and each passage text's item index (``Location.line``, how gold is matched)."""
        doc = ParsedDocument(title=self.title, format="txt", pages=1)
        sections: dict[str, ParsedNode] = {}
        items: dict[str, int] = {}
        ordered = sorted(self.passages.items(), key=lambda kv: kv[1][0])
        for idx, (text, (_key, heading)) in enumerate(ordered):
            node = ParsedNode(kind="passage", title="", text=text, location=Location(line=idx))
            items[text] = idx
            if heading:
                sec = sections.get(heading)
                if sec is None:
                    sec = ParsedNode(kind="section", title=heading, location=Location(line=idx))
                    sections[heading] = sec
                    doc.children.append(sec)
                sec.children.append(node)
            else:
                doc.children.append(node)
        return doc, items


def _records(root: Path, name: str) -> list[dict]:
    path = root / SETS[name] / "derived" / "pairs.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh]
    recs = [r for r in recs if r.get("positives") and not r.get("not_answerable")]
    keep_docs = SAMPLE_DOCS.get(name)
    if keep_docs:
        docs = sorted({str(r["doc_id"]) for r in recs})
        random.Random(f"traindata:{name}").shuffle(docs)
        chosen = set(docs[:keep_docs])
        recs = [r for r in recs if str(r["doc_id"]) in chosen]
    return recs


def _passages(name: str, rec: dict) -> tuple[list[tuple[str, str | None, float | None]], list[str]]:
    """(text, heading, order) for every passage the record names, and the texts of its positives."""
    out: list[tuple[str, str | None, float | None]] = []
    pos: list[str] = []
    if name == "pubmedqa":
        for i, c in enumerate(rec.get("contexts") or []):
            out.append((_squash(c["text"]), _squash(str(c.get("heading") or "")) or None, float(i)))
        for p in rec["positives"]:
            out.append((_squash(p), "CONCLUSIONS", 1e6))
            pos.append(_squash(p))
        return out, pos
    if name == "orsharc":
        ids = rec.get("positive_snippet_ids") or []
        for i, p in enumerate(rec["positives"]):
            head, body = _split_heading(p)
            order = float(ids[i]) if i < len(ids) and str(ids[i]).isdigit() else None
            out.append((_squash(body), head, order))
            pos.append(_squash(body))
        for n in rec["negatives"]:
            head, body = _split_heading(n)
            out.append((_squash(body), head, None))
        return out, pos
    if name == "covidqa":
        ids = rec.get("positive_chunk_ids") or []
        for i, p in enumerate(rec["positives"]):
            out.append((p.strip(), None, float(ids[i]) if i < len(ids) else None))
            pos.append(p.strip())
        out.extend((n.strip(), None, None) for n in rec["negatives"])
        return out, pos
    # medquad: the positive is the answer to the record's own question (its number ends the id)
    m = _QNUM.search(str(rec.get("id", "")))
    for p in rec["positives"]:
        out.append((p.strip(), None, float(m.group(1)) if m else None))
        pos.append(p.strip())
    out.extend((n.strip(), None, None) for n in rec["negatives"])
    return out, pos


def _query(name: str, rec: dict) -> str:
    q = _squash(rec["question"])
    if name == "orsharc" and rec.get("scenarios"):
        return f"{_squash(rec['scenarios'][0])} {q}"
    return q


def load_traindata(root: Path, name: str, *, limit: int | None = None) -> EvalSet:
    """One traindata set as an evaluation collection (``root`` is ``../shared/traindata``)."""
    if name not in SETS:
        raise ValueError(f"unknown traindata set {name!r}: use {', '.join(SETS)}")
    recs = _records(root, name)
    docs: dict[str, _Doc] = {}
    named: list[tuple[dict, str, list[str]]] = []
    for rec in recs:
        doc_id = str(rec["doc_id"])
        d = docs.setdefault(doc_id, _Doc(_title(rec)))
        passages, pos = _passages(name, rec)
        for text, heading, order in passages:
            if text:
                d.add(text, heading, order)
        named.append((rec, doc_id, [p for p in pos if p]))
    documents: list[EvalDocument] = []
    items: dict[str, dict[str, int]] = {}
    heads: dict[str, dict[str, str | None]] = {}
    for doc_id, d in docs.items():
        parsed, idx = d.build()
        path = f"traindata://{name}/{doc_id}"
        documents.append(EvalDocument(path=path, parsed=parsed))
        items[doc_id] = idx
        heads[doc_id] = {t: h for t, (_k, h) in d.passages.items()}
    questions: list[EvalQuestion] = []
    for rec, doc_id, pos in named:
        path = f"traindata://{name}/{doc_id}"
        gold = [GoldPassage(path=path, heading_path=(h,) if (h := heads[doc_id].get(p)) else (),
                            item=items[doc_id][p], text=p)
                for p in pos if p in items[doc_id]]
        if not gold:
            continue
        q = _squash(rec["question"])
        questions.append(EvalQuestion(qid=str(rec["id"]), query=_query(name, rec), gold=gold, question=q,
                                      scenario=_squash(rec["scenarios"][0]) if rec.get("scenarios") else ""))
    if limit is not None and limit < len(questions):
        step = len(questions) / limit
        questions = [questions[int(i * step)] for i in range(limit)]
    return EvalSet(f"traindata-{name}", documents, questions)
