"""Does the library hold what the question asks about? Two signals the not-found rule
(:func:`~shelfwise.core.answers.answer.weak_evidence`) reads beside the encoder's cosine:

* :func:`key_coverage`: the share of the question's key terms (its content words, less the words that only say
  what kind of answer it wants) that the top passages hold, with their titles and headings (off for every encoder:
  no point of its curve kept the answerable questions found, docs/eval/answers.md);
* :func:`subject_absent`: some key term occurs nowhere in the library (the full-text index matches it in no
  passage, title or heading), and the question without it means something else to the encoder: "What is the dress
  code?" over a library without "dress" is not answered by the nearest sentence about a code. A question in
  another language than the library shares almost none of its words with it and is left to the cosine.

The thresholds are the encoder's own (``core/answers/tuning.py``), chosen by
``benchmarks/research/not_found_tune.py`` on data built for it (docs/eval/answers.md).
"""
from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from shelfwise.core.answers.extractive import focus_question
from shelfwise.core.answers.short import stems
from shelfwise.core.languages import fts_index_text, query_terms
from shelfwise.core.models.backend import Embedder
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.store.db import Store
from shelfwise.core.store.fts import TOKENIZE

PASSAGES = 3  # the top passages whose words count
# words that say what kind of answer a question wants, not what it is about
SCAFFOLD = stems("""many much long often get gets need needs want know tell happen happens able allowed possible
viele viel lange oft brauche braucht bekomme bekommt combien souvent besoin faut""")


def key_terms(question: str) -> set[str]:
    """The question's key terms (:func:`~shelfwise.core.answers.short.stems` of its asking sentence, less
    ``SCAFFOLD``)."""
    return stems(focus_question(question)) - SCAFFOLD


def key_coverage(question: str, hits: Sequence[Hit], passages: int = PASSAGES) -> float:
    """The share of the question's key terms that the first ``passages`` hits hold (text, title, headings); 1.0
    for a question without key terms."""
    keys = key_terms(question)
    if not keys:
        return 1.0
    held: set[str] = set()
    for h in hits[:passages]:
        held |= stems(" ".join([h.text, h.title, *h.heading_path]))
    return len(keys & held) / len(keys)


NEAR_MIN_LETTERS = 7  # the shortest index token a near spelling is looked for
_VOCAB = "shelfwise_fts_vocabulary"  # the index's vocabulary, a temporary fts5vocab table per connection
_INSTANCES = "shelfwise_fts_instances"  # where each of its tokens stands (node id), the same
# the nodes whose words count as the library's: a document's and a section's titles, and the passages
_VOCABULARY_KINDS = ("document", "section", "passage")


@dataclass(frozen=True)
class Absent:
    """What the library's full-text index says of a question's words: ``keys``, the key terms (:func:`key_terms`)
    that no passage, title or heading holds; ``key_count``, how many key terms it has; ``present``, the share of all
    its words (function words too) that the library holds. A question in another language than the library shares
    almost none of its words with it (``present`` near 0); one in the library's language shares its function words
    at least."""

    keys: tuple[str, ...]
    key_count: int
    present: float


def _in_library(store: Store, term: str, collection_id: int | None, document_ids: Collection[int] | None) -> bool:
    """Whether any node of the collection (of ``document_ids`` when given) matches ``term`` in the full-text index:
    the first match, unranked (ranking every passage that holds a common word would read them all)."""
    # CROSS JOIN: the index's matches drive the loop; with a plain JOIN SQLite walks every node of the collection
    # and asks the index of each, a second at 10^5 nodes for a word the library does not hold (docs/scale.md)
    sql = (f"SELECT 1 FROM nodes_fts CROSS JOIN nodes n ON n.id = nodes_fts.rowid WHERE nodes_fts MATCH ? "
           f"AND n.kind IN ({', '.join('?' * len(_VOCABULARY_KINDS))})")
    return _any_node(store, sql, [f'"{term}"', *_VOCABULARY_KINDS], collection_id, document_ids)


def _any_node(store: Store, sql: str, params: list[object], collection_id: int | None,
              document_ids: Collection[int] | None) -> bool:
    """Whether ``sql`` (over nodes ``n``) has a row in the collection (of ``document_ids`` when given): the first."""
    if collection_id is not None:
        sql += " AND n.collection_id = ?"
        params.append(collection_id)
    if document_ids is not None:
        sql += f" AND n.document_id IN ({', '.join('?' * len(document_ids))})"
        params.extend(document_ids)
    return store.conn.execute(sql + " LIMIT 1", params).fetchone() is not None


def index_tokens(term: str) -> list[str]:
    """``term`` as the full-text index holds it (folded, stemmed by its tokenizer, ``core/store/fts.py``): the
    tokens an in-memory FTS5 table with the same tokenizer makes of it."""
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize=\"{TOKENIZE}\")")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        conn.execute("INSERT INTO t(x) VALUES (?)", (fts_index_text(term),))
        return [str(r[0]) for r in conn.execute("SELECT term FROM v ORDER BY offset")]


def _one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with at most one letter added, dropped, changed, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) <= 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1:]


def _spelled_near(store: Store, term: str, collection_id: int | None,
                  document_ids: Collection[int] | None) -> bool:
    """Whether the library holds a word one edit from ``term`` (as the index holds both: "coruption" and
    "corruption", "accomodation" and "accommodation", "befristete" and "befristet"): a misspelt or inflected word is
    not an absent one. Only for index tokens of at least :data:`NEAR_MIN_LETTERS` letters with the same first two
    (a short word one edit from another is often another word: "dress" and "press")."""
    tokens = index_tokens(term)
    if len(tokens) != 1 or len(tokens[0]) < NEAR_MIN_LETTERS:
        return False
    token = tokens[0]
    try:
        for name, kind in ((_VOCAB, "row"), (_INSTANCES, "instance")):
            store.conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, nodes_fts, {kind})")
        near = [str(r[0]) for r in store.conn.execute(
            f"SELECT term FROM temp.{_VOCAB} WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ?",
            (token[:2], token[:2] + "\U0010ffff", len(token) - 1, len(token) + 1))]
        return any(_one_edit(token, v) and _token_in_library(store, v, collection_id, document_ids) for v in near)
    except sqlite3.Error:  # a library opened read-only without a temporary schema: no near word is looked for
        return False


def _token_in_library(store: Store, token: str, collection_id: int | None,
                      document_ids: Collection[int] | None) -> bool:
    """Whether an index token (as the vocabulary holds it, already stemmed) is in a node of the collection (of
    ``document_ids``)."""
    sql = (f"SELECT 1 FROM temp.{_INSTANCES} i CROSS JOIN nodes n ON n.id = i.doc WHERE i.term = ? "
           f"AND n.kind IN ({', '.join('?' * len(_VOCABULARY_KINDS))})")
    return _any_node(store, sql, [token, *_VOCABULARY_KINDS], collection_id, document_ids)


def absent_terms(store: Store, question: str, collection_id: int | None,
                 document_ids: Collection[int] | None = None) -> Absent:
    """Which words of the question's asking sentence occur nowhere in the library (the collection, or
    ``document_ids`` of it when given). The words are the index's own query terms
    (:func:`~shelfwise.core.languages.query_terms`), each matched through the index's tokenizer, so the comparison
    is the same in every spaced script; a key term is one whose :func:`~shelfwise.core.answers.short.stems` form is
    among :func:`key_terms`. Runs of an unsegmented script (Chinese, Japanese, Thai) are left out: their bigrams
    cross word boundaries, so an absent one says nothing."""
    keys = key_terms(question)
    terms = [t for t in query_terms(focus_question(question)) if " " not in t]
    absent = [t for t in terms if not _in_library(store, t, collection_id, document_ids)]
    absent = [t for t in absent if not _spelled_near(store, t, collection_id, document_ids)]
    key_terms_here = {t for t in terms if stems(t) & keys}
    return Absent(tuple(t for t in absent if t in key_terms_here), len(key_terms_here),
                  1 - len(absent) / len(terms) if terms else 1.0)


def without_words(question: str, words: Collection[str]) -> str:
    """``question`` with each of ``words`` taken out where it stands as a word (case-insensitively)."""
    if not words:
        return question
    pattern = r"(?<!\w)(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")(?!\w)"
    return " ".join(re.sub(pattern, " ", question, flags=re.IGNORECASE).split())


def keep_cosine(embedder: Embedder, question: str, absent: Collection[str]) -> float:
    """The encoder's cosine between the asking sentence and the same sentence without the ``absent`` words: near 1
    when they only dress the question ("How large is the yearly budget?" without "large", "yearly"), lower when they
    are what it asks about ("What is the dress code?" without "dress"). 1.0 when nothing is absent."""
    if not absent:
        return 1.0
    focus = focus_question(question)
    v = np.asarray(embedder.embed_queries([focus, without_words(focus, absent)]), dtype=np.float64)
    norms = float(np.linalg.norm(v[0]) * np.linalg.norm(v[1]))
    return float(v[0] @ v[1] / norms) if norms else 1.0


def subject_absent(store: Store, embedder: Embedder, question: str, hits: Sequence[Hit], *, min_present: float,
                   max_keep: float) -> bool:
    """Whether what the question asks about is nowhere in the library the ``hits`` come from: some of its key terms
    occur in no passage, title or heading (:func:`absent_terms`), the library holds at least ``min_present`` of its
    words (it is in the library's language: a question in another language shares none and is left to the
    cosine), and without those terms the question means something else (:func:`keep_cosine` under
    ``max_keep``)."""
    if not hits or max_keep <= 0:
        return False
    doc = store.document(hits[0].document_id)
    if doc is None:
        return False
    absent = absent_terms(store, question, doc.collection_id)
    return (bool(absent.keys) and absent.present >= min_present
            and keep_cosine(embedder, question, absent.keys) < max_keep)
