"""The topic-shift test and the follow-up reading, looked at turn by turn on the TUNE split of the multi-turn set.

Plays every tune dialogue twice: each question alone, and each later question read as a follow-up of the turns
before it (no topic-shift test). For every later turn it writes the evidence a topic-shift test can read (the words'
cue, the question's own content words and those new to the conversation, the embedder's and BM25's margins inside
vs outside the last answer's documents, its cited passages against the best passage elsewhere, the cosine with the
last query, the flat confidence of the question alone and of the follow-up reading over the composed text's
or the question's own BM25 hits) beside whether the question alone and the follow-up reading put the gold passage
first. Walks are memoised by (query, query vector, prior), so a later rule replays only what it changes.

    .venv/bin/python benchmarks/research/conversation_gate.py --db LIB [--rules NAME=JSON ...]

Writes docs/eval/conversation-gate.json; docs/eval/conversation.md says what was chosen from it.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
from reading_research import ALONE, SHIPPED, in_documents, player
from reading_research import ResearchRule as ReadingRule

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.extractive import share_held
from shelfwise.core.conversation.cues import (
    CONTINUE,
    LEAD,
    content_words,
    names_referent,
    own_words,
    points_back,
)
from shelfwise.core.conversation.model import Turn
from shelfwise.core.conversation.reading import (
    FEW_WORDS,
    compose,
    flat_best,
    history_documents,
    history_nodes,
    lexical_margin,
    mix_vectors,
    passage_words,
    shift_margin,
)
from shelfwise.core.conversation.turn import lexical_search
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.features import QueryEvidence, level_features
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.evaluation.dialogues import load_dialogues, play, resolve_golds, summarise

ROOT = Path(__file__).resolve().parents[2]
DECISION: list[DecisionModel] = []  # the collection's calibrated decision model (set in main)


ANSWER: list[Any] = [answer_question]  # how the plays answer: memoised by memoise_walks


def memoise_walks(path: str | None = None) -> dict[Any, Any]:
    """answer_question as the dialogue player calls it, memoised by what decides the walk (kept in ``path``
    between runs when given: the same library, code and models only); it becomes :data:`ANSWER`."""
    real = answer_question
    memo: dict[Any, Any] = {}
    if path and Path(path).exists():
        memo.update(pickle.loads(Path(path).read_bytes()))

    def cached(shelf: Any, query: str, **kw: Any) -> Any:
        q_vec = kw.get("q_vec")
        prior = kw.get("prior") or {}
        vec = None if q_vec is None else np.asarray(q_vec, np.float32).round(6).tobytes()
        key = (str(shelf.store.path), query, vec, tuple(sorted(prior.items())))
        if key not in memo:
            memo[key] = real(shelf, query, **kw)
        return memo[key]

    ANSWER[:] = [cached]
    return memo


def features(shelf: Any, snap: Any, question: str, before: list[Turn]) -> dict[str, float]:
    last = before[-1]
    emb = shelf.embedder
    qv = np.asarray(emb.embed_query(question), np.float32)
    docs = history_documents(snap, last)
    cin, cout = shift_margin(snap, qv, docs)
    lin, lout = lexical_margin(snap, lexical_search(shelf.store, snap)(question), docs)
    cos = snap.passage_cos(qv)
    cited = np.zeros(len(cos), bool)
    for nid in history_nodes(last):
        if nid in snap.row_of:
            cited[snap.row_of[nid]] = True
    pin = float(cos[cited].max()) if cited.any() else -1.0
    pout = float(cos[~cited].max()) if (~cited).any() else -1.0
    prev = np.asarray(emb.embed_query(last.reading.query or last.question), np.float32)
    own = content_words(question)
    seen = {w for t in before for w in content_words(t.question)}
    # the last answer's cited sections against the rest (the rest of their documents, and everything else)
    in_sec = np.zeros(len(cos), bool)
    for nid in history_nodes(last):
        sec = snap.section_of(nid) if nid in snap.nodes else None
        if sec is not None:
            in_sec[slice(*sec.span)] = True
    in_doc = np.zeros(len(cos), bool)
    for d in docs:
        in_doc[slice(*snap.nodes[d].span)] = True
    sec_in = float(cos[in_sec].max()) if in_sec.any() else -1.0
    sec_out = float(cos[~in_sec].max()) if (~in_sec).any() else -1.0
    doc_rest = in_doc & ~in_sec
    sec_doc_out = float(cos[doc_rest].max()) if doc_rest.any() else -1.0
    hits = lexical_search(shelf.store, snap)(question)
    best = max(hits.values(), default=0.0) or 1.0
    sec_ids = set(snap.passage_ids[in_sec].tolist())
    rest_ids = set(snap.passage_ids[doc_rest].tolist())
    lex_sec_in = max((v for k, v in hits.items() if k in sec_ids), default=0.0) / best
    lex_sec_out = max((v for k, v in hits.items() if k not in sec_ids), default=0.0) / best
    lex_sec_doc_out = max((v for k, v in hits.items() if k in rest_ids), default=0.0) / best
    rest = LEAD.sub("", question).strip()
    # each reading's cheap confidence and best passage from one flat scoring: the question alone; the follow-up
    # reading (the composed text's BM25 hits and the mixed vector, the question's + SHIPPED.mix x the last
    # query's, normalised, as the walk of a follow-up reads them); undiluted, the mixed vector with the question's
    # own BM25 hits (only the vector differs from the question alone's)
    mixed = mix_vectors(qv, prev, SHIPPED.mix)
    composed = compose(SHIPPED.text, question, before)
    composed_hits = lexical_search(shelf.store, snap)(composed)
    readings = (("alone", qv, hits), ("followup", mixed, composed_hits), ("followup_own", mixed, hits))
    best = {name: flat_best(snap, vec, h, DECISION[0]) for name, vec, h in readings}
    flat = {"confidence": best["alone"][0]}
    ev = QueryEvidence.build(snap, qv, hits)
    p = DECISION[0].model("passage").proba(level_features(snap, ev, [snap.nodes[int(n)] for n in snap.passage_ids]))
    for name, sel in (("sec_in", in_sec), ("sec_out", ~in_sec), ("doc_in", in_doc), ("doc_out", ~in_doc)):
        flat[f"confidence_{name}"] = float(p[sel].max()) if sel.any() else 0.0  # over every passage, by where
    flat["followup_confidence"] = best["followup"][0]
    flat["confidence_gap"] = flat["confidence"] - flat["followup_confidence"]
    flat["followup_confidence_own"] = best["followup_own"][0]
    flat["confidence_gap_own"] = flat["confidence"] - flat["followup_confidence_own"]
    # how much of the question's own words the best passage of each reading has
    stems = own_words(question)
    flat["own_n"] = float(len(stems))
    flat["alone_best_inside"] = float(best["alone"][1] is not None and in_documents(snap, best["alone"][1], docs))
    for name, (_, node) in best.items():
        flat[f"cov_{name}_flat"] = share_held(stems, passage_words(snap, node))
    return {"cue": float(points_back(question)), "content": float(len(own)),
            "novel": float(len([w for w in own if w not in seen])), "doc_in": cin, "doc_out": cout,
            "doc_margin": cin - cout, "lex_in": lin, "lex_out": lout, "lex_margin": lin - lout,
            "cited_cos": pin, "elsewhere_cos": pout, "cited_margin": pin - pout, "last_query_cos": float(qv @ prev),
            "top_cos": float(cos.max()), "sec_in": sec_in, "sec_out": sec_out, "sec_doc_out": sec_doc_out,
            "sec_margin": sec_in - sec_out, "sec_doc_margin": sec_in - sec_doc_out, "lex_sec_in": lex_sec_in,
            "lex_sec_out": lex_sec_out, "lex_sec_doc_out": lex_sec_doc_out,
            "lex_sec_margin": lex_sec_in - lex_sec_out, "continues": float(bool(CONTINUE.match(question))),
            "rest_cue": float(points_back(rest)) if rest else 1.0, "rest_content": float(len(content_words(rest))),
            "rest_full": float(bool(FULL_QUESTION.match(rest))),
            "rest_content_all": float(len(content_words(CONTINUE.sub("", question, count=1)))), **flat}


# a question that opens with its own question word or auxiliary ("how do I ...", "is there ...") rather than a
# fragment ("the hotel cap?", "for part-time staff?")
FULL_QUESTION = re.compile(r"^(?:who|whom|whose|what|when|where|why|how|which|can|could|do|does|did|is|are|was|"
                           r"were|will|would|should|shall|may|must|have|has)\b", re.I)


def walk_coverage(snap: Any, question: str, alone: Turn, followup: Turn, gold: int) -> dict[str, float]:
    """How much of the question's own words the top passage of each play's walk has, and the gold passage."""
    stems = own_words(question)
    top = {"alone": alone.hit_nodes[:1], "followup": followup.hit_nodes[:1], "gold": [gold]}
    return {f"cov_{k}_walk" if k != "gold" else "cov_gold": share_held(stems, passage_words(snap, v[0] if v else None))
            for k, v in top.items()}


def walk_confidence(shelf: Any, question: str) -> float:
    """The walk's calibrated score of its top passage for the question alone (the alone play's walk, memoised)."""
    answer = ANSWER[0](shelf, question, collection="default", generate=False, prior=None,
                                           q_vec=None)
    hits = answer.search.hits if answer.search is not None else []
    return float(hits[0].score) if hits else 0.0


def followup_walk_confidence(shelf: Any, snap: Any, question: str, before: list[Turn], rule: ReadingRule) -> float:
    """The walk's calibrated score of its top passage for the follow-up reading (the forced play's walk, memoised)."""
    from reading_research import read

    reading, q_vec = read(question, before, snap, shelf.embedder, rule, search=lexical_search(shelf.store, snap))
    answer = ANSWER[0](shelf, reading.query, collection="default", generate=False,
                                           prior=reading.prior or None, q_vec=q_vec)
    hits = answer.search.hits if answer.search is not None else []
    return float(hits[0].score) if hits else 0.0


def gate_says_followup(t: dict[str, Any], rule: ReadingRule) -> bool:
    """What ``rule``'s topic-shift test decides from a turn's features (as ``reading.read`` does)."""
    cue = int(t["cue"])
    if cue > 0 and t["content"] <= FEW_WORDS:
        cue = 2
    score = t["doc_margin"] + rule.cue_weight * cue + rule.lexical_weight * t["lex_margin"]
    if rule.own_words and (t["cue"] < 0 or (t["cue"] == 0 and t["content"] >= rule.own_words)):
        return False
    followup = t["confidence"] < rule.confidence if rule.confidence and t["cue"] == 0 else score >= rule.threshold
    if (followup and rule.coverage_gap is not None and not names_referent(t["question"])
            and t["own_n"] >= rule.coverage_words
            and t["cov_alone_flat"] - t["cov_followup_flat"] >= rule.coverage_gap - 1e-9
            and (t["alone_best_inside"] or not rule.coverage_inside)):
        return False
    if followup and rule.alone_gap is not None:
        key = "followup_confidence_own" if rule.gap_hits == "question" else "followup_confidence"
        return t["confidence"] - t[key] <= rule.alone_gap
    return followup


def simulate(turns: list[dict[str, Any]], rule: ReadingRule) -> dict[str, float]:
    """Passage Hit@1 per kind if each later turn were read as ``rule``'s test says, each reading's hit taken from
    the two plays (the history of the forced follow-up play: an estimate; the chosen rules are played for real)."""
    out: dict[str, float] = {}
    for kind in ("followup", "shift"):
        sel = [t for t in turns if t["kind"] == kind]
        out[kind] = round(sum(t["followup"] if gate_says_followup(t, rule) else t["alone"] for t in sel)
                          / max(1, len(sel)), 3)
    out["both"] = round((out["followup"] + out["shift"]) / 2, 3)
    return out


GRID = [dict(threshold=th, cue_weight=cw, lexical_weight=lw, own_words=ow, confidence=cf, alone_gap=gap)
        for th in (-0.33, -0.3, -0.25, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05)
        for cw in (0.0, 0.1, 0.2) for lw in (0.0, 0.3) for ow in (0, 4)
        for cf in (0.0, 0.3, 0.44, 0.55)
        for gap in (None, -0.05, 0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.1, 0.2)]


def sequence_guard(db: str, rule: ReadingRule) -> list[str]:
    """The bundled sample questions asked one after another in one conversation on a library of the sample alone
    (as tests/test_gui_window.py asks them): the ones whose extracted answer misses its gold answer."""
    from reading_research import decision_for, read

    from shelfwise import resources
    from shelfwise.core.conversation.model import Conversation
    from shelfwise.core.conversation.turn import turn_from
    from shelfwise.evaluation.answer_modes import fact_match

    wrong = []
    with Shelf(Settings(db_path=Path(db), answer_generate=False)) as opened:
        shelf = opened.walk  # the answer path's library
        coll = shelf.store.find_collection("default")
        assert coll is not None
        snap = snapshot_for(shelf.store, coll.id, shelf.embedder.model_id)
        conv = Conversation(None, "default")
        for line in resources.path("sample_questions.jsonl").read_text().splitlines():
            q = json.loads(line)
            reading, q_vec = read(q["question"], conv.turns, snap, shelf.embedder, rule,
                                  search=lexical_search(shelf.store, snap), decision=decision_for(shelf, snap, rule))
            answer = ANSWER[0](shelf, reading.query, collection="default", generate=False,
                                                   prior=reading.prior or None, q_vec=q_vec)
            conv.turns.append(turn_from(q["question"], reading, answer))
            if not fact_match(answer.text.split("\n")[0], [q["answer"]]):
                wrong.append(f"{q['question']} ({reading.mode})")
    return wrong


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--data", default=str(ROOT / "tests" / "data" / "dialogues.jsonl"))
    ap.add_argument("--split", default="tune")
    ap.add_argument("--out", default=str(ROOT / "docs" / "eval" / "conversation-gate.json"))
    ap.add_argument("--rules", nargs="*", default=[], help="NAME=JSON of ReadingRule fields over SHIPPED, played too")
    ap.add_argument("--guard-db", help="a library of the sample alone: each rule's sequence guard runs on it")
    ap.add_argument("--memo", help="file that keeps the memoised walks between runs (same library and code only)")
    ap.add_argument("--plays-only", action="store_true",
                    help="play the rules only: not alone nor forced, no per-turn features nor simulated grid")
    args = ap.parse_args()
    if args.split == "test":
        raise SystemExit("the gate is looked at on the tune split only")
    memo = memoise_walks(args.memo)
    plays = player(ANSWER[0])  # play() reads with the research rules (the --rules may name their fields)
    dialogues = load_dialogues(args.data, args.split)
    report: dict[str, Any] = {"data": args.data, "split": args.split, "dialogues": len(dialogues)}
    with Shelf(Settings(db_path=Path(args.db), answer_generate=False)) as opened:
        shelf = opened.walk  # the answer path's library
        shelf.embedder.query_cache = 100_000  # every question vector kept for the replays
        coll = shelf.store.find_collection("default")
        assert coll is not None
        snap = snapshot_for(shelf.store, coll.id, shelf.embedder.model_id)
        DECISION[:] = [load_decision(shelf.store, coll.id, shelf.embedder, shelf.backend)]
        golds = resolve_golds(shelf.store, coll.id, dialogues)
        t0 = time.perf_counter()
        forced_rule = replace(SHIPPED, gate=False)
        alone, forced = [], []
        if not args.plays_only:
            alone = [play(shelf, d, golds, ALONE, "default", plays) for d in dialogues]
            print(f"alone: {time.perf_counter() - t0:.0f} s", flush=True)
            forced = [play(shelf, d, golds, forced_rule, "default", plays) for d in dialogues]
            print(f"forced follow-up: {time.perf_counter() - t0:.0f} s", flush=True)
        rows = []
        for d, a, f in zip(dialogues, alone, forced, strict=False):  # none in --plays-only
            for i in range(1, len(d.turns)):
                rows.append({"dialogue": d.id, "position": i + 1, "kind": d.turns[i].kind,
                             "question": d.turns[i].question, "alone": a.rows[i]["passage"],
                             "followup": f.rows[i]["passage"], "followup_query": f.rows[i]["query"],
                             "alone_conf": walk_confidence(shelf, d.turns[i].question),
                             "followup_conf": followup_walk_confidence(shelf, snap, d.turns[i].question, f.turns[:i],
                                                                       forced_rule),
                             **features(shelf, snap, d.turns[i].question, f.turns[:i]),
                             **walk_coverage(snap, d.turns[i].question, a.turns[i], f.turns[i],
                                             golds[(d.id, i)].node_id)})
        report["turns"] = rows
        if not args.plays_only:
            sims = [{"rule": g, **simulate(rows, replace(SHIPPED, **g))} for g in GRID]
            sims.sort(key=lambda r: (-r["both"], -r["followup"]))
            report["simulated"] = sims
            print("simulated best:", *sims[:15], sep="\n  ", flush=True)
        played = {} if args.plays_only else {"alone": alone, "forced": forced}
        for spec in args.rules:
            name, _, js = spec.partition("=")
            rule = replace(SHIPPED, **json.loads(js or "{}"))
            played[name] = [play(shelf, d, golds, rule, "default", plays) for d in dialogues]
            report.setdefault("rules", {})[name] = asdict(rule)
            print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
        report["methods"] = {k: summarise(v) for k, v in played.items()}
        report["rows"] = {k: [{"dialogue": p.dialogue, **r} for p in v for r in p.rows] for k, v in played.items()}
    if args.memo:
        Path(args.memo).write_bytes(pickle.dumps(memo))
    if args.guard_db:
        report["guard"] = {name: sequence_guard(args.guard_db, replace(SHIPPED, **json.loads(js or "{}")))
                           for name, _, js in (spec.partition("=") for spec in ["shipped=", *args.rules])}
        print("sequence guard (wrong):", json.dumps(report["guard"], indent=1))
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    for k, m in report["methods"].items():
        print(k, {kind: m["by_kind"][kind]["passage"] for kind in m["by_kind"]}, "shift read alone",
              m["shift_read_alone"], "follow-ups read as such", m["followup_read_as_followup"])


if __name__ == "__main__":
    main()
