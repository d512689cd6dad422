"""Topic clusters over a collection's documents, so no level of the walk compares more than the model can.

When a collection has more documents than the branching budget ``b``, the documents' embedding vectors (mean of
their passages' and their description's vectors) are grouped with scikit-learn k-means into at most ``b`` clusters,
recursively where a cluster is still larger than ``b``. Each cluster gets a one-line description: its most
distinctive terms (TF-IDF against the rest of the collection) and example titles. Rebuilt only when the set of
documents changed; when few documents changed, new ones join their nearest existing cluster instead.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from shelfwise.core.languages import UNSEGMENTED, has_unsegmented, lazy, word_units
from shelfwise.core.store.db import Store

_WORD = lazy(r"[^\W\d_]{3,}", re.UNICODE)
_UNSEG_PAIR = lazy(rf"(?<![^\W\d_]){UNSEGMENTED}{{2}}(?![^\W\d_])")
STOP = set(
    "the and for with that this from are was were will have has you your can not but all any may must its our they "
    "their them there what when which who how why about into more also than then such other these those been being "
    "page section chapter table figure see use used using one two per each".split()
)


@dataclass
class ClusterPlan:
    title: str
    description: str
    documents: list[int] = field(default_factory=list)  # document node ids
    children: list[ClusterPlan] = field(default_factory=list)


def _normalise(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n > 0, n, 1.0)


def document_vectors(
    store: Store, collection_id: int, model: str
) -> tuple[list[int], list[str], list[str], np.ndarray]:
    """(document node ids, titles, texts for terms, vectors) of the collection's ok documents."""
    rows = store.conn.execute(
        "SELECT n.id, n.title, n.description, n.document_id FROM nodes n JOIN documents d ON d.id = n.document_id "
        "WHERE n.kind = 'document' AND n.collection_id = ? ORDER BY n.id", (collection_id,),
    ).fetchall()
    ids, mat = store.embeddings(model, collection_id=collection_id)
    vec_of = {int(i): v for i, v in zip(ids.tolist(), mat, strict=False)} if len(ids) else {}
    passage_rows = store.conn.execute(
        "SELECT id, document_id FROM nodes WHERE collection_id = ? AND kind IN ('passage', 'section')",
        (collection_id,),
    ).fetchall()
    by_doc: dict[int, list[np.ndarray]] = {}
    for pid, did in passage_rows:
        v = vec_of.get(int(pid))
        if v is not None:
            by_doc.setdefault(int(did), []).append(v)
    doc_ids, titles, texts, vecs = [], [], [], []
    for nid, title, desc, did in rows:
        parts = by_doc.get(int(did), [])
        own = vec_of.get(int(nid))
        if own is not None:
            parts = [*parts, own, own]  # the description counts a little more than any one passage
        if not parts:
            continue
        heads = store.conn.execute(
            "SELECT group_concat(title, ' ') FROM (SELECT title FROM nodes WHERE document_id = ? AND kind = 'section' "
            "LIMIT 60)", (did,),
        ).fetchone()[0] or ""
        doc_ids.append(int(nid))
        titles.append(title or "")
        texts.append(f"{title} {title} {desc or ''} {heads}")
        vecs.append(np.mean(parts, axis=0))
    dim = len(vecs[0]) if vecs else 1
    return doc_ids, titles, texts, _normalise(np.asarray(vecs, np.float32).reshape(-1, dim))


def _terms(text: str) -> list[str]:
    """Words of three letters or more, not stop words; a run of Chinese/Japanese/Thai-like script gives its
    character bigrams (``core/languages.word_units``) instead of one clause-long "word"."""
    out: list[str] = []
    for w in _WORD.findall(text.lower()):
        if has_unsegmented(w):
            out.extend(u for u in word_units(w) if has_unsegmented(u) and len(u) > 1)
        elif w not in STOP:
            out.append(w)
    for run in _UNSEG_PAIR.findall(text):  # two-character words stand alone between punctuation too
        out.append(run)
    return out


def distinctive_terms(texts: list[str], groups: list[list[int]], n: int = 4) -> list[list[str]]:
    """Top ``n`` terms per group by TF-IDF of the group's text against the other groups."""
    counts: list[dict[str, int]] = []
    for g in groups:
        c: dict[str, int] = {}
        for i in g:
            for w in _terms(texts[i]):
                c[w] = c.get(w, 0) + 1
        counts.append(c)
    df: dict[str, int] = {}
    for c in counts:
        for w in c:
            df[w] = df.get(w, 0) + 1
    out = []
    for c in counts:
        total = sum(c.values()) or 1
        scored = sorted(c, key=lambda w: -(c[w] / total) * math.log(1 + len(groups) / df[w]))
        out.append(scored[:n])
    return out


def plan_clusters(ids: list[int], titles: list[str], texts: list[str], vecs: np.ndarray, branching: int,
                  seed: int = 0) -> list[ClusterPlan]:
    """Group documents into clusters of at most ``branching`` (recursively); no clusters when they already fit."""
    from sklearn.cluster import KMeans

    def split(idx: list[int]) -> list[ClusterPlan]:
        k = min(branching, max(2, math.ceil(len(idx) / max(2, int(branching * 0.75)))))
        km = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(vecs[idx])
        groups = [[idx[j] for j in range(len(idx)) if km.labels_[j] == c] for c in range(k)]
        groups = [g for g in groups if g]
        if len(groups) == 1:  # k-means could not separate them: cut evenly, keeps the bound
            g = groups[0]
            groups = [g[i:i + branching] for i in range(0, len(g), branching)]
        terms = distinctive_terms(texts, groups)
        plans = []
        for g, t in zip(groups, terms, strict=True):
            examples = "; ".join(titles[i] for i in g[:3])
            plan = ClusterPlan(title=", ".join(t[:3]).capitalize() or titles[g[0]],
                               description=f"{', '.join(t)} - e.g. {examples}")
            if len(g) > branching:
                plan.children = split(g)
            else:
                plan.documents = [ids[i] for i in g]
            plans.append(plan)
        return plans

    if len(ids) <= branching:
        return []
    return split(list(range(len(ids))))


def signature(store: Store, collection_id: int) -> str:
    rows = store.conn.execute(
        "SELECT path, sha256 FROM documents WHERE collection_id = ? AND status != 'error' ORDER BY path",
        (collection_id,),
    ).fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def write_clusters(store: Store, collection_id: int, plans: list[ClusterPlan],
                   describe: Callable[[ClusterPlan], str]) -> int:
    """Replace the collection's cluster nodes by ``plans`` in one transaction; returns how many were written."""
    root = store.conn.execute("SELECT root_node_id FROM collections WHERE id = ?", (collection_id,)).fetchone()[0]
    written = 0
    with store.transaction():
        store.conn.execute(
            "UPDATE nodes SET parent_id = ?, depth = 1 WHERE collection_id = ? AND kind = 'document'",
            (root, collection_id),
        )
        store.conn.execute("DELETE FROM nodes WHERE collection_id = ? AND kind = 'cluster'", (collection_id,))

        def add(plan: ClusterPlan, parent: int, depth: int, ordinal: int) -> None:
            nonlocal written
            cur = store.conn.execute(
                "INSERT INTO nodes(collection_id, document_id, parent_id, kind, ordinal, depth, title, description, "
                "text, location, page, heading_path, heading_text) "
                "VALUES (?, NULL, ?, 'cluster', ?, ?, ?, ?, '', '{}', NULL, '[]', '')",
                (collection_id, parent, ordinal, depth, plan.title, describe(plan)),
            )
            written += 1
            cid = int(cur.lastrowid or 0)
            for i, child in enumerate(plan.children):
                add(child, cid, depth + 1, i)
            for i, doc_node in enumerate(plan.documents):
                store.conn.execute("UPDATE nodes SET parent_id = ?, ordinal = ?, depth = ? WHERE id = ?",
                                   (cid, i, depth + 1, doc_node))

        for i, plan in enumerate(plans):
            add(plan, root, 1, i)
    return written
