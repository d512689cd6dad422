"""BM25 in every script: the full-text index before migration 0005, a trigram table, and the segmenting index
Shelfwise uses now, measured side by side (figures in docs/eval/xquad.md).

* XQuAD (evaluation only): each language's 240 paragraphs, its 1,190 questions; paragraph Hit@1 of BM25.
* A Japanese manual (``../shared/corpus/debian-reference-ja.pdf``, read by Shelfwise's own PDF parser), which has
  no questions: known-item queries made from its text (a random run of 6-12 characters of a passage's Japanese
  text, Hit@1 when the first hit holds that run), and term findability (katakana words of 3+ characters that
  stand inside a longer run of Japanese: the share of the passages holding the word that the first 100 hits
  include).

Usage: ``.venv/bin/python benchmarks/product/fts_scripts.py --json docs/eval/fts_scripts.json``
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import time
from pathlib import Path

from shelfwise.core.languages import tokens
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.evaluation.run import shared_dir
from shelfwise.evaluation.xquad import languages, load_xquad
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode

_OLD_TERM = re.compile(r"[^\W_]+")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")
_KATAKANA = re.compile(r"[\u30a0-\u30ff]{3,}")


def old_query(text: str) -> str | None:
    """The FTS query before migration 0005 (each Unicode word quoted, OR-ed)."""
    seen: dict[str, str] = {}
    for m in _OLD_TERM.finditer(text):
        seen.setdefault(m.group(0).casefold(), f'"{m.group(0)}"')
    return " OR ".join(list(seen.values())[:64]) or None


def trigram_query(text: str) -> str | None:
    """For a trigram table: a run of CJK text as its overlapping trigrams, other words of 3+ characters whole
    (a trigram table cannot match anything shorter). Words as the new index sees them (marks inside words), so
    that Devanagari is not cut at its vowel signs here either."""
    terms: dict[str, None] = {}
    for word in tokens(text):
        pos = 0
        for run in _CJK_RUN.finditer(word):
            if run.start() - pos >= 3:
                terms.setdefault(f'"{word[pos:run.start()]}"', None)
            s = run.group(0)
            for i in range(len(s) - 2):
                terms.setdefault(f'"{s[i:i + 3]}"', None)
            pos = run.end()
        if len(word) - pos >= 3:
            terms.setdefault(f'"{word[pos:]}"', None)
    return " OR ".join(list(terms)[:64]) or None


class Raw:
    """An FTS5 table of its own over the texts (the old tokenizer, or trigram)."""

    def __init__(self, texts: list[str], tokenize: str, query) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize=\"{tokenize}\")")
        self.conn.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", list(enumerate(texts)))
        self.query = query

    def search(self, text: str, limit: int) -> list[int]:
        match = self.query(text)
        if match is None:
            return []
        return [r[0] for r in self.conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, limit))]


class Shelf:
    """Shelfwise's own store (the index as migration 0005 builds it), through Store.search."""

    def __init__(self, texts: list[str]) -> None:
        self.store = Store(":memory:")
        c = self.store.collection("bench")
        doc = ParsedDocument(title="bench", format="txt", pages=1, children=[
            ParsedNode("passage", "", t, Location(line=i)) for i, t in enumerate(texts)])
        self.store.write_document(c.id, "/bench", FileMeta(size=0, mtime=0.0, sha256="x"), doc)
        self.line = {p.id: p.location.line for p in self.store.passages()}

    def search(self, text: str, limit: int) -> list[int]:
        return [self.line[n.id] for n, _ in self.store.search(text, limit=limit)]


def indexes(texts: list[str]) -> dict[str, object]:
    return {
        "unicode61 (before 0005)": Raw(texts, "porter unicode61 remove_diacritics 2", old_query),
        "trigram table": Raw(texts, "trigram", trigram_query),
        "segmented (0005, Shelfwise now)": Shelf(texts),
    }


def xquad(lang: str) -> dict[str, float]:
    ds = load_xquad(shared_dir() / "evaldata" / "xquad", lang)
    texts = [d.parsed.children[0].text for d in ds.documents]
    index = {d.path: i for i, d in enumerate(ds.documents)}
    out = {}
    for name, ix in indexes(texts).items():
        hits = [ix.search(q.query, 1) for q in ds.questions]  # type: ignore[attr-defined]
        out[name] = round(sum(bool(h) and h[0] == index[q.gold[0].path] for h, q in
                              zip(hits, ds.questions, strict=True)) / len(ds.questions), 3)
    return out


def japanese(n: int = 300, seed: int = 0) -> dict[str, dict[str, float]]:
    from shelfwise.ingest.registry import parse

    doc = parse(shared_dir() / "corpus" / "debian-reference-ja.pdf")
    texts: list[str] = []

    def walk(node) -> None:
        for c in node.children:
            if c.kind == "passage":
                texts.append(c.text)
            walk(c)

    walk(doc)
    rng = random.Random(seed)
    known: list[tuple[str, int]] = []
    runs = [(i, m.group(0)) for i, t in enumerate(texts) for m in _CJK_RUN.finditer(t) if len(m.group(0)) >= 12]
    for i, run in rng.sample(runs, min(n, len(runs))):
        k = rng.randint(6, 12)
        start = rng.randint(0, len(run) - k)
        known.append((run[start:start + k], i))
    inner = sorted({m.group(0) for t in texts for r in _CJK_RUN.finditer(t) for m in _KATAKANA.finditer(r.group(0))
                    if len(m.group(0)) < len(r.group(0))})
    terms = rng.sample(inner, min(n, len(inner)))
    out: dict[str, dict[str, float]] = {}
    for name, ix in indexes(texts).items():
        hit1 = sum(bool(h) and q in texts[h[0]] for q, _ in known for h in [ix.search(q, 1)])  # type: ignore
        found = []
        for term in terms:
            holding = {i for i, t in enumerate(texts) if term in t}
            got = set(ix.search(term, 100)) & holding  # type: ignore[attr-defined]
            found.append(len(got) / min(len(holding), 100))
        out[name] = {"known_item_hit1": round(hit1 / len(known), 3),
                     "katakana_term_recall100": round(sum(found) / len(found), 3)}
    out["_counts"] = {"passages": len(texts), "known_item_queries": len(known), "terms": len(terms)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    result = {"xquad_bm25_paragraph_hit1": {}, "japanese_manual": japanese()}
    for lang in languages(shared_dir() / "evaldata" / "xquad"):
        result["xquad_bm25_paragraph_hit1"][lang] = xquad(lang)
        print(lang, result["xquad_bm25_paragraph_hit1"][lang], flush=True)
    print(json.dumps(result["japanese_manual"], indent=1, ensure_ascii=False))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
