"""FTS5 BM25 ranking: the statements behind :meth:`Store.search`, :meth:`Store.search_hits` and
:meth:`Store.search_ids` (``core/store/db.py``), as functions over the store's connection.

Ranking and rows are two statements: the best node ids with their -bm25 first, then the rows of those ids. A snippet
reads the node's text back through the index's source view; asked for in the ranking statement it would be made for
every matching row before the sort (docs/benchmarks.md, "BM25 without snippets"), so up to :data:`SNIPPET_BATCH`
hits the snippets are made for the returned ids only.

FTS5 scores every row that matches before it sorts, so a question's ranking costs time in proportion to the rows
its words match: at 10^6 passages a question holding "the" or "what" scores nearly all of them. :func:`rank`
therefore ranks a plain OR of words in two parts when that is exact (:func:`_rank_split`): BM25 is a sum over the
words, and a word's part of a row's score is at most ``idf * (k1 + 1)``, so rows that match only the commonest
words, whose bounds add up to less than the score of the ``limit``-th best row matching the others, cannot be
among the best and are never scored. The same rows with the same scores come back (docs/scale.md, "Session 21:
10^6 passages").
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from shelfwise.core.store.fts import clean_snippet
from shelfwise.core.store.types import NODE_COLS, NodeTuple, SearchHit, SQLValue, node_from_row

SNIPPET_BATCH = 50  # search_hits makes snippets for at most this many rows by id; more, with the ranking
JOINED_NODE_COLS = ", ".join("n." + c.strip() for c in NODE_COLS.split(","))  # NODE_COLS of the joined node ``n``
K1 = 1.2  # FTS5's bm25 k1 (its default: bm25(nodes_fts) is called without parameters)
SPLIT_MIN_POSTINGS = 20_000  # below this many rows matched by the words in all, a ranking is one statement
_PLAIN_OR = re.compile(r'"[^"]*"(?: OR "[^"]*")*')  # what textutil.fts_query makes of a question: "a" OR "b" ...


def filters(kinds: Iterable[str] | None, collection_id: int | None,
            document_id: int | None = None) -> tuple[str, list[SQLValue]]:
    """A ``WHERE`` clause on the nodes (alias ``n``) by kind, collection and document, and its parameters; ``""``
    with no filter."""
    clauses: list[str] = []
    params: list[SQLValue] = []
    if kinds is not None:
        ks = list(kinds)
        clauses.append(f"n.kind IN ({', '.join('?' * len(ks))})" if ks else "0")
        params.extend(ks)
    if collection_id is not None:
        clauses.append("n.collection_id = ?")
        params.append(collection_id)
    if document_id is not None:
        clauses.append("n.document_id = ?")
        params.append(document_id)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def _after_match(kinds: Sequence[str], collection_id: int | None,
                 document_ids: Collection[int] | None) -> tuple[str, list[SQLValue]]:
    """The ranking statements' filters on the joined node (``n``), after the MATCH."""
    where, params = filters(kinds, collection_id)
    where = where.replace("WHERE ", "AND ", 1)
    if document_ids is not None:
        where += f" AND n.document_id IN ({', '.join('?' * len(document_ids))})"
        params.extend(sorted(document_ids))
    return where, params


def rank(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str], collection_id: int | None,
         document_ids: Collection[int] | None) -> list[tuple[int, float]]:
    """The best ``limit`` node ids matching the FTS5 expression ``match``, with -bm25, best first (no row, no
    snippet). None, a limit <= 0 or an empty scope match nothing."""
    if match is None or limit <= 0 or (document_ids is not None and not document_ids):
        return []
    where, params = _after_match(kinds, collection_id, document_ids)
    if _PLAIN_OR.fullmatch(match):
        terms = re.findall(r'"[^"]*"', match)
        stats = _term_stats(conn, terms)
        if stats is not None:
            split = _rank_split(conn, terms, int(limit), where, params, stats)
            if split is not None:
                return split
            if document_ids is None:
                two = _rank_two_or_more(conn, match, terms, int(limit), where, params, stats)
                if two is not None:
                    return two
    if document_ids is None:
        found = _rank_then_filter(conn, match, int(limit), where, params)
        if found is not None:
            return found
    return [(int(i), -float(score)) for i, score in conn.execute(
        f"SELECT n.id, bm25(nodes_fts) FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?",
        (match, *params, int(limit)),
    )]


def _rank_then_filter(conn: sqlite3.Connection, match: str, limit: int, where: str,
                      params: list[SQLValue]) -> list[tuple[int, float]] | None:
    """:func:`rank` without joining every match to its node: the index's best ``2 * limit + 50`` rows, then the
    nodes among them that pass ``where`` (kind, collection). The same rows as the joined statement when at least
    ``limit`` of them pass, or when the index had no more; None otherwise (the joined statement is then run). The
    join looked a node up for every row the words match, most of a ranking's time once they match many."""
    wide = 2 * limit + 50
    top = [(int(i), -float(s)) for i, s in conn.execute(
        "SELECT rowid, bm25(nodes_fts) FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY bm25(nodes_fts) LIMIT ?",
        (match, wide))]
    kept = _passing(conn, top, where, params)
    return kept[:limit] if len(kept) >= limit or len(top) < wide else None


@dataclass(frozen=True)
class TermStats:
    """What the bounds on a question's terms are made of: each term's rows (``df``), FTS5's idf of it, and the
    most a row holding it can take from it, ``idf * (k1 + 1)`` (:func:`_term_stats`)."""

    df: dict[str, int]
    idf: dict[str, float]
    bound: dict[str, float]
    rows: int  # the largest node id: N in the idf, at least the rows indexed (so each bound stays an upper bound)


def _term_stats(conn: sqlite3.Connection, terms: list[str]) -> TermStats | None:
    """The terms' :class:`TermStats`, or None when a ranking of them is one statement anyway: fewer than two terms,
    a term given twice, or fewer than :data:`SPLIT_MIN_POSTINGS` rows matched by the terms in all."""
    if len(terms) < 2 or len(set(terms)) != len(terms):
        return None
    df = {t: int(conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH ?", (t,)).fetchone()[0])
          for t in terms}
    if sum(df.values()) < SPLIT_MIN_POSTINGS:
        return None
    n = int(conn.execute("SELECT coalesce(max(id), 0) FROM nodes").fetchone()[0])
    idf = {t: max(math.log((n - d + 0.5) / (d + 0.5)), 1e-6) for t, d in df.items()}
    return TermStats(df, idf, {t: (K1 + 1) * v for t, v in idf.items()}, n)


def _rank_split(conn: sqlite3.Connection, terms: list[str], limit: int, where: str,
                params: list[SQLValue], stats: TermStats) -> list[tuple[int, float]] | None:
    """:func:`rank` of ``terms`` OR-ed, without scoring the rows that match only its commonest terms, when that
    gives the same best ``limit`` rows; None when it cannot (then the whole expression is ranked).

    A term's part of a row's BM25 is ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))``, below
    ``idf * (k1 + 1)``; FTS5's idf is ``log((N - df + 0.5) / (df + 0.5))`` (1e-6 when that is not above 0), and the
    largest node id stands for N (at least the rows indexed, so the bound stays an upper bound). The scores of the
    rows matching the rarest terms (a first part, at least 4 x ``limit`` rows' worth) give a lower bound on the
    ``limit``-th best score; the commonest terms whose bounds add up to less than it are left out: a row matching
    only those scores less than the rows returned. The rows that do match a kept term get their whole score: the
    BM25 of ``(kept) AND (left out)`` or of ``(kept) NOT (left out)``, whose terms are all the question's (a sum
    over terms: the same score as the whole expression gives)."""
    df, idf, bound = stats.df, stats.idf, stats.bound
    rarest = sorted(terms, key=lambda t: (df[t], t))
    # worth trying only when the commonest terms that hold half the rows matched could be left out: their bounds
    # together below one rarer term's part in a row that holds it once (at the average length, idf); otherwise
    # (words all about as common) the whole expression is ranked at once
    half = sum(df.values()) / 2
    dropped = 0
    while dropped < len(rarest) and sum(df[t] for t in rarest[:len(rarest) - dropped]) > half:
        dropped += 1
    rest = rarest[:len(rarest) - dropped]
    if not rest or sum(bound[t] for t in rarest[len(rest):]) >= max(idf[t] for t in rest):
        return None
    first: list[str] = []
    for t in rarest:
        first.append(t)
        if sum(df[x] for x in first) >= 4 * limit:
            break
    scores = _scored(conn, first, [t for t in terms if t not in first], where, params)
    if len(scores) < limit:
        return None
    floor = sorted(scores.values(), reverse=True)[limit - 1]
    left: list[str] = []
    total = 0.0
    for t in reversed(rarest):  # the commonest first
        if total + bound[t] >= floor:
            break
        left.append(t)
        total += bound[t]
    kept = [t for t in terms if t not in left]
    if not left or not kept or sum(df[t] for t in kept) > half:
        return None
    if set(kept) != set(first):
        scores = _scored(conn, kept, left, where, params)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def _rank_two_or_more(conn: sqlite3.Connection, match: str, terms: list[str], limit: int, where: str,
                      params: list[SQLValue], stats: TermStats) -> list[tuple[int, float]] | None:
    """:func:`rank` of ``terms`` OR-ed without scoring the rows that hold only one of them, when that gives the same
    best ``limit`` rows; None when it cannot (then the ranking goes on as before).

    For questions whose words are all about as common (each in a few percent of the rows, so :func:`_rank_split`
    has no commonest words to leave out), most matching rows hold one word: a row holding only the term ``t`` scores
    below ``bound[t]``. The rows holding two terms or more are found without scoring (``t1 AND (t2 OR t3 ...) OR
    t2 AND (t3 ...) ...``) and ranked by the whole expression, each score the one the whole ranking gives it (the
    same statement, restricted by rowid); when the ``limit``-th best of them (after the kind filter) is above every
    term's bound, no row holding one term can be among the best, and they are the ranking. Tried only when the
    rows holding three terms or more are expected (the terms taken as independent) to be at least ``limit``:
    the best rows then hold several terms and the check passes; otherwise it would cost a statement for
    nothing."""
    if len(terms) < 3 or _expected_at_least(stats, terms, 3) < limit:
        return None
    two = " OR ".join(f"{terms[i]} AND ({' OR '.join(terms[i + 1:])})" for i in range(len(terms) - 1))
    wide = 2 * limit + 50
    # +rowid: the restriction is checked row by row; offered to FTS5 as a rowid constraint, it would run the whole
    # query again for each id of the list
    top = [(int(i), -float(s)) for i, s in conn.execute(
        "SELECT rowid, bm25(nodes_fts) FROM nodes_fts WHERE nodes_fts MATCH ? AND +rowid IN "
        "(SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?) ORDER BY bm25(nodes_fts) LIMIT ?", (match, two, wide))]
    kept = _passing(conn, top, where, params)
    if len(kept) < limit or not kept[limit - 1][1] > max(stats.bound.values()):
        return None
    return kept[:limit]


def _expected_at_least(stats: TermStats, terms: list[str], k: int) -> float:
    """How many rows are expected to hold at least ``k`` of ``terms`` if the terms fell into rows independently."""
    n = max(stats.rows, 1)
    dist = [1.0] + [0.0] * k  # P(exactly j terms so far), the last entry "k or more"
    for t in terms:
        p = min(stats.df[t] / n, 1.0)
        nxt = [0.0] * (k + 1)
        for j, q in enumerate(dist):
            nxt[j] += q * (1 - p)
            nxt[min(j + 1, k)] += q * p
        dist = nxt
    return dist[k] * n


def _passing(conn: sqlite3.Connection, top: list[tuple[int, float]], where: str,
             params: list[SQLValue]) -> list[tuple[int, float]]:
    """The rows of ``top`` whose nodes pass ``where`` (kind, collection), in ``top``'s order."""
    passing: set[int] = set()
    ids = [i for i, _ in top]
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        passing.update(int(r[0]) for r in conn.execute(
            f"SELECT n.id FROM nodes n WHERE n.id IN ({', '.join('?' * len(part))}) {where}", (*part, *params)))
    return [(i, s) for i, s in top if i in passing]


def _scored(conn: sqlite3.Connection, kept: list[str], left: list[str], where: str,
            params: list[SQLValue]) -> dict[int, float]:
    """-bm25 of the whole OR of ``kept + left`` for every row (passing ``where``) that matches a ``kept`` term."""
    # CROSS JOIN keeps the index's matches the outer loop: with no ORDER BY, SQLite may otherwise walk the nodes
    # and evaluate the MATCH once for each of them
    sql = (f"SELECT n.id, bm25(nodes_fts) FROM nodes_fts CROSS JOIN nodes n ON n.id = nodes_fts.rowid "
           f"WHERE nodes_fts MATCH ? {where}")
    either = " OR ".join(kept)
    if not left:
        return {int(i): -float(s) for i, s in conn.execute(sql, (either, *params))}
    # the rows holding a left-out term too, and the others: each row scored once, by an expression whose terms
    # are all the question's (a NOT's terms have no hit in the rows it keeps)
    other = " OR ".join(left)
    out = {int(i): -float(s) for i, s in conn.execute(sql, (f"({either}) AND ({other})", *params))}
    out.update((int(i), -float(s)) for i, s in conn.execute(sql, (f"({either}) NOT ({other})", *params)))
    return out


def ranked_rows(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str],
                collection_id: int | None, document_ids: Collection[int] | None) -> list[tuple[NodeTuple, float]]:
    """The best ``limit`` matching node rows with their -bm25, best first (:func:`rank`, then the rows of the
    nodes returned, 500 ids a statement)."""
    ranked = rank(conn, match, limit, kinds, collection_id, document_ids)
    rows: dict[int, NodeTuple] = {}
    ids = [i for i, _ in ranked]
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        for r in conn.execute(f"SELECT {NODE_COLS} FROM nodes WHERE id IN ({', '.join('?' * len(part))})", part):
            rows[int(r[0])] = tuple(r)
    return [(rows[i], score) for i, score in ranked if i in rows]


def hits(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str], collection_id: int | None,
         document_ids: Collection[int] | None) -> list[SearchHit]:
    """The best ``limit`` matching nodes, each with its -bm25 and a snippet (matched terms in ``[ ]``)."""
    if limit > SNIPPET_BATCH:
        return _hits_in_one_statement(conn, match, limit, kinds, collection_id, document_ids)
    rows = ranked_rows(conn, match, limit, kinds, collection_id, document_ids)
    snippets: dict[int, str] = {}
    if match is not None and rows:
        ids = [int(r[0]) for r, _ in rows]
        snippets = {int(i): sn for i, sn in conn.execute(
            "SELECT rowid, snippet(nodes_fts, -1, '[', ']', '\u2026', 16) FROM nodes_fts WHERE nodes_fts MATCH ? "
            f"AND rowid IN ({', '.join('?' * len(ids))})", (match, *ids))}
    return [SearchHit(node_from_row(r), score, clean_snippet(snippets.get(int(r[0]), ""))) for r, score in rows]


def _hits_in_one_statement(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str],
                           collection_id: int | None, document_ids: Collection[int] | None) -> list[SearchHit]:
    """:func:`hits` for more than :data:`SNIPPET_BATCH`: the snippets in the ranking statement (then made for every
    match: FTS5 would evaluate the whole expression again for each id of a ``rowid IN`` list)."""
    if match is None or limit <= 0 or (document_ids is not None and not document_ids):
        return []
    where, params = _after_match(kinds, collection_id, document_ids)
    rows = conn.execute(
        f"SELECT {JOINED_NODE_COLS}, bm25(nodes_fts), snippet(nodes_fts, -1, '[', ']', '\u2026', 16) "
        f"FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?", (match, *params, int(limit)),
    ).fetchall()
    return [SearchHit(node_from_row(r[:12]), -float(r[12]), clean_snippet(r[13])) for r in rows]
