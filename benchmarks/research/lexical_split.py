"""The walk's keyword ranking at scale on real text: the two-part ranking (``core/store/ranking.py``, ``rank``)
against the whole statement, the same questions alternated in one run.

    python benchmarks/research/lexical_split.py --copies 20 --questions 300 --json
    python benchmarks/research/lexical_split.py --growth DIR/growth-100000.db --questions 10 --json

The library: SQuAD v1.1 dev's 2,067 paragraphs (``../shared/evaldata``, evaluation data, read only to measure
speed: nothing is chosen on it), each written ``--copies`` times as a passage of one collection (into ``--dir``,
built once). Copying keeps each word's share of the passages, which is what a ranking's cost follows (the rows a
question's words match), while the library grows. The questions: SQuAD dev's first ``--questions`` questions,
as ``shelfwise ask`` ranks them for the walk (``textutil.fts_query``, the best 200 passages). Per question both
rankings run (alternated, so both see the same load); reported: the medians and totals of their seconds, the
ratio, how many questions were ranked in two parts, and how many rankings differ (ids and scores; equal scores
at the cut may come in either order).

``--growth DB``: a library ``benchmarks/product/growth.py`` built instead (its synthetic words), the questions the
first 8 words of ``--questions`` passages from the middle of its tree (as ``growth.py`` asks).

``--before FILE``: another checkout's ``core/store/ranking.py`` (a frozen copy of the code before a change): its
``rank`` is timed too, alternated with this one's, and every ranking compared with this one's (ids, scores and
order identical: ``rankings_not_identical_to_before``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import time
import zipfile
from pathlib import Path

from shelfwise.core.store import ranking
from shelfwise.core.store.db import Store
from shelfwise.core.store.textutil import fts_query

ROOT = Path(__file__).resolve().parents[2]
SQUAD = ROOT.parent / "shared" / "evaldata" / "squad_v1.1_dev" / "original" / "dev-v1.1.json.zip"


def squad(path: Path) -> tuple[list[str], list[str]]:
    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read("dev-v1.1.json"))["data"]
    paragraphs = [p["context"] for a in data for p in a["paragraphs"]]
    questions = [qa["question"] for a in data for p in a["paragraphs"] for qa in p["qas"]]
    return paragraphs, questions


def build(db: Path, paragraphs: list[str], copies: int) -> None:
    """One collection, ``copies`` x the paragraphs as passages under its root (the FTS index kept by the
    store's triggers)."""
    done = db.with_suffix(".done")
    if db.exists() and done.exists() and done.read_text() == str(copies):
        return
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), done):
        p.unlink(missing_ok=True)
    store = Store(db)
    try:
        coll = store.collection("squad")
        rows = []
        nid = int(store.conn.execute("SELECT coalesce(max(id), 0) FROM nodes").fetchone()[0])
        for c in range(copies):
            for k, text in enumerate(paragraphs):
                nid += 1
                rows.append((nid, coll.id, None, coll.root_node_id, "passage", c * len(paragraphs) + k, 1, "",
                             text[:200], text, "{}", None, "[]", ""))
        with store.transaction():
            store.conn.executemany(
                "INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, ordinal, depth, title, "
                "description, text, location, page, heading_path, heading_text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    finally:
        store.close()
    done.write_text(str(copies))


def whole(conn, match: str, limit: int, where: str, params: list) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    """The one-statement ranking (what ``rank`` ran before the split)."""
    return [(int(i), -float(s)) for i, s in conn.execute(
        f"SELECT n.id, bm25(nodes_fts) FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?", (match, *params, limit))]


def same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    sa, sb = [round(s, 9) for _, s in a], [round(s, 9) for _, s in b]
    if sa != sb:
        return False
    return not sa or {i for i, s in a if round(s, 9) > sa[-1]} == {i for i, s in b if round(s, 9) > sb[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/shelfwise-lexical"))
    ap.add_argument("--squad", type=Path, default=SQUAD)
    ap.add_argument("--growth", type=Path, default=None, help="a growth.py library instead of SQuAD's copies")
    ap.add_argument("--before", type=Path, default=None, help="another checkout's core/store/ranking.py, timed and "
                    "compared beside this one")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    before = None
    if args.before is not None:
        spec = importlib.util.spec_from_file_location("ranking_before", args.before)
        assert spec is not None and spec.loader is not None
        before = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(before)
    if args.growth is not None:
        db = args.growth
        store = Store(db, read_only=True)
        conn = store.conn
        cid = store.collection("synthetic").id
        n = int(conn.execute("SELECT count(*) FROM nodes WHERE kind = 'passage'").fetchone()[0])
        questions = [" ".join(str(t).split()[:8]) + "?" for (t,) in conn.execute(
            "SELECT text FROM nodes WHERE kind = 'passage' ORDER BY id LIMIT ? OFFSET ?", (args.questions, n // 2))]
        paragraphs = [""] * n
        args.copies = 1
    else:
        args.dir.mkdir(parents=True, exist_ok=True)
        paragraphs, questions = squad(args.squad)
        db = args.dir / f"squad-x{args.copies}.db"
        build(db, paragraphs, args.copies)
        store = Store(db, read_only=True)
        conn = store.conn
        cid = store.collection("squad").id
    where, params = ranking._after_match(("passage",), cid, None)
    split_s, whole_s, before_s = [], [], []
    parted = restricted = differ = not_identical = 0
    for q in questions[:args.questions]:
        match = fts_query(q)
        if match is None:
            continue
        t0 = time.perf_counter()
        a = ranking.rank(conn, match, args.limit, ("passage",), cid, None)
        split_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = whole(conn, match, args.limit, where, params)
        whole_s.append(time.perf_counter() - t0)
        if before is not None:
            t0 = time.perf_counter()
            c = before.rank(conn, match, args.limit, ("passage",), cid, None)
            before_s.append(time.perf_counter() - t0)
            not_identical += a != c
        terms = re.findall(r'"[^"]*"', match)
        stats = ranking._term_stats(conn, terms)
        if stats is not None:
            two = ranking._rank_split(conn, terms, args.limit, where, params, stats) is not None
            parted += two
            restricted += not two and ranking._rank_two_or_more(conn, match, terms, args.limit, where, params,
                                                                stats) is not None
        differ += not same(a, b)
    store.close()
    out: dict[str, object] = {
           "passages": len(paragraphs) * args.copies, "questions": len(split_s), "ranked_in_two_parts": parted,
           "ranked_from_rows_of_two_words_or_more": restricted, "rankings_that_differ": differ,
           "whole_median_s": round(statistics.median(whole_s), 4),
           "split_median_s": round(statistics.median(split_s), 4),
           "whole_total_s": round(sum(whole_s), 2), "split_total_s": round(sum(split_s), 2),
           "ratio_whole_over_split_total": round(sum(whole_s) / max(sum(split_s), 1e-9), 2),
           "ratio_whole_over_split_median": round(statistics.median(whole_s) / max(statistics.median(split_s), 1e-9),
                                                  2)}
    if before_s:
        out.update({"before": str(args.before), "before_median_s": round(statistics.median(before_s), 4),
                    "before_total_s": round(sum(before_s), 2),
                    "ratio_before_over_this_total": round(sum(before_s) / max(sum(split_s), 1e-9), 2),
                    "rankings_not_identical_to_before": not_identical})
    print(json.dumps(out, indent=1) if args.json else out)


if __name__ == "__main__":
    main()
