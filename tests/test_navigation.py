"""Navigation logic on a real SQLite store with a hashed bag-of-words embedder (no language model)."""

from __future__ import annotations

import pytest

from shelfwise.core.indexing.vectors import refresh_collection
from shelfwise.core.navigation.calibrate import calibrate, make_probes
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.evaluation.datasets import EvalQuestion, GoldPassage
from shelfwise.evaluation.retrieval import judge
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode
from tests.fakes import HashEmbedder

TOPICS = [
    ("astronomy", ["telescope", "galaxy", "nebula", "orbit", "comet"]),
    ("cooking", ["recipe", "oven", "flour", "simmer", "garlic"]),
    ("gardening", ["compost", "seedling", "prune", "mulch", "tulip"]),
    ("finance", ["invoice", "ledger", "audit", "budget", "dividend"]),
]


def _doc(topic: str, words: list[str], n: int) -> ParsedDocument:
    sections = []
    for s in range(3):
        passages = [
            ParsedNode(kind="passage", title="", location=Location(page=s + 1),
                       text=f"{topic} note {n}-{s}-{p}: the {words[(s + p) % 5]} and the {words[(s + p + 1) % 5]} "
                            f"matter here; unique token z{n}x{s}x{p} appears once.")
            for p in range(3)
        ]
        sections.append(ParsedNode(kind="section", title=f"{topic.title()} part {s} of {n}", children=passages,
                                   location=Location(page=s + 1)))
    return ParsedDocument(title=f"{topic.title()} handbook {n}", format="pdf", children=sections, pages=3)


@pytest.fixture
def shelf_store(tmp_path):
    store = Store(tmp_path / "nav.db")
    coll = store.collection("default")
    for t, (topic, words) in enumerate(TOPICS):
        for n in range(5):
            store.write_document(coll.id, f"/docs/{topic}-{n}.pdf", FileMeta(1, 1.0, f"{t}{n}"),
                                 _doc(topic, words, t * 10 + n))
    emb = HashEmbedder()
    refresh_collection(store, coll.id, emb, Budgets(branching=6))
    yield store, coll.id, emb
    store.close()


def _nav(store, emb, **budget):
    return Navigator(store, None, emb, Settings(readout="embedding", budgets=Budgets(branching=6, **budget)))


def test_clusters_bound_branching_and_spans_are_contiguous(shelf_store):
    store, cid, emb = shelf_store
    snap = snapshot_for(store, cid, emb.model_id)
    root = snap.nodes[snap.root]
    assert all(snap.nodes[c].kind == "cluster" for c in root.children)
    assert len(root.children) <= 6
    for node in snap.nodes.values():
        if node.kind in ("cluster", "collection"):
            assert len(node.children) <= 6 or node.kind == "collection"
        a, b = node.span
        for row in range(a, b):  # every passage row in a node's span really lies beneath it
            pid = int(snap.passage_ids[row])
            assert node.id in {x.id for x in snap.ancestors(pid)} | {pid}
    assert len(snap.passage_ids) == 20 * 9


def test_walk_finds_unique_passage_and_records_levels(shelf_store):
    store, _cid, emb = shelf_store
    res = _nav(store, emb, keep=2, passages=5, hybrid=0).navigate(SearchRequest("z21x1x2 compost mulch", "default"))
    assert res.hits and "z21x1x2" in res.hits[0].text
    labels = [lvl.label for lvl in res.trace.levels]
    assert labels[0] == "topics" and labels[-1] == "passages"
    assert "documents" in labels and "sections" in labels
    for lvl in res.trace.levels[1:-1]:
        assert len(lvl.kept) <= 2
    assert any(not c.kept for lvl in res.trace.levels for c in lvl.candidates)
    assert res.trace.tokens == 0  # embedding readout evaluates no tokens
    assert res.hits[0].path == "/docs/gardening-1.pdf" and res.hits[0].location.page == 2


def test_forced_branch_is_expanded(shelf_store):
    store, _cid, emb = shelf_store
    nav = _nav(store, emb, keep=1, passages=5, hybrid=0, first_keep_ratio=0.01)
    first = nav.navigate(SearchRequest("telescope galaxy", "default"))
    pruned = [c for c in first.trace.levels[0].candidates if not c.kept]
    assert pruned
    forced = nav.navigate(SearchRequest("telescope galaxy", "default", keep=(pruned[0].node_id,)))
    kept_ids = {c.node_id for c in forced.trace.levels[0].kept}
    assert pruned[0].node_id in kept_ids


def test_hybrid_candidates_rescue_pruned_branch(shelf_store):
    store, _cid, emb = shelf_store
    nav_off = _nav(store, emb, keep=1, passages=5, hybrid=0, first_keep_ratio=0.01)
    nav_on = _nav(store, emb, keep=1, passages=5, hybrid=10, first_keep_ratio=0.01)
    q = "z33x2x0"  # a token only lexical search can find (hash cosine of one rare word is weak but nonzero)
    on = nav_on.navigate(SearchRequest(q, "default"))
    assert any("z33x2x0" in h.text for h in on.hits)
    assert any(c.source in ("lexical", "dense") for c in on.trace.levels[-1].candidates)
    off = nav_off.navigate(SearchRequest(q, "default"))
    assert len(off.trace.levels[-1].candidates) <= len(on.trace.levels[-1].candidates)


def test_judge_levels():
    store = Store(":memory:")
    emb = HashEmbedder()
    coll = store.collection("c")
    doc = ParsedDocument(title="T", format="html", children=[
        ParsedNode(kind="section", title="A", children=[
            ParsedNode(kind="passage", title="", text="alpha", location=Location(line=1)),
            ParsedNode(kind="passage", title="", text="beta", location=Location(line=2))]),
        ParsedNode(kind="section", title="B", children=[
            ParsedNode(kind="passage", title="", text="gamma", location=Location(line=4))]),
    ])
    store.write_document(coll.id, "u1", FileMeta(0, 0, "x"), doc)
    refresh_collection(store, coll.id, emb)
    snap = snapshot_for(store, coll.id, emb.model_id)
    by_text = {snap.nodes[int(p)].text: int(p) for p in snap.passage_ids}
    doc_path = {d.id: d.path for d in store.documents(coll.id)}
    q = EvalQuestion("q", "x", [GoldPassage("u1", ("A",), item=2)])
    m = judge(snap, doc_path, q, [by_text["alpha"], by_text["beta"], by_text["gamma"]])
    assert m["passage_hit1"] == 0.0 and m["passage_mrr"] == 0.5 and m["passage_recall5"] == 1.0
    assert m["section_hit1"] == 1.0 and m["document_hit1"] == 1.0
    m2 = judge(snap, doc_path, q, [by_text["gamma"], by_text["beta"]])
    assert m2["section_hit1"] == 0.0 and m2["section_mrr"] == 0.5
    store.close()


def test_self_calibration_fits_levels_and_budgets(shelf_store):
    store, cid, emb = shelf_store
    snap = snapshot_for(store, cid, emb.model_id)
    probes = make_probes(snap, 60)
    assert len(probes) == 60 and {p.kind for p in probes} == {"sentence", "heading"}
    assert all(p.query.strip() for p in probes)
    model = calibrate(store, cid, emb, None, Settings(readout="embedding", budgets=Budgets(branching=6)),
                      n_probes=60)
    assert model.levels["passage"].fitted and model.levels["document"].fitted
    assert model.lm_levels == ()  # no generative model given: nothing may claim to use it
    assert set(model.keep) <= {"document", "section"} and all(k >= 1 for k in model.keep.values())
    # the stored model is what a new navigator loads
    from shelfwise.core.navigation.snapshots import load_decision

    loaded = load_decision(store, cid, emb, None)
    assert loaded.levels["passage"].fitted and loaded.keep == model.keep


def test_question_part_splits_context_from_question():
    from shelfwise.core.navigation.navigator import question_part

    assert question_part("How many days of leave do I get?") is None
    q = "I started in March. My manager agreed. Can I carry over leave? Thanks."
    assert question_part(q) == "Can I carry over leave?"
    assert question_part("I work part time. Tell me the leave rules.") == "Tell me the leave rules."


def test_decision_model_roundtrip_and_feature_change_falls_back_to_prior():
    import json

    from shelfwise.core.navigation.decision import DecisionModel

    m = DecisionModel(lm_levels=("passage",), keep={"section": 3}, first_keep_ratio=0.2)
    m.levels["passage"].bias = 0.123
    back = DecisionModel.from_json(m.to_json())
    assert back.lm_levels == ("passage",) and back.keep == {"section": 3} and back.first_keep_ratio == 0.2
    assert back.levels["passage"].bias == pytest.approx(0.123)
    stale = json.loads(m.to_json())
    stale["features"] = stale["features"][:-1]  # calibrated with another feature set
    assert DecisionModel.from_json(json.dumps(stale)).key == "prior"
    other_prior = json.loads(m.to_json())
    other_prior["prior"] = "z_cos_max=9.0"  # calibrated by scaling other prior weights
    assert DecisionModel.from_json(json.dumps(other_prior)).key == "prior"


def test_calibration_scale_keeps_the_prior_ranking_and_what_children_read(shelf_store):
    """Platt scaling changes probabilities, not the order of candidates nor the parent evidence children get."""
    import numpy as np

    from shelfwise.core.navigation.calibrate import fit_level
    from shelfwise.core.navigation.decision import prior_model
    from shelfwise.core.navigation.features import FEATURES

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, len(FEATURES))).astype(np.float32)
    y = (x[:, FEATURES.index("z_cos_max")] + 0.3 * rng.normal(size=60) > 0.5).astype(int)
    fitted = fit_level([(i // 6, x[i], int(y[i])) for i in range(60)], drop_lm=True)
    assert fitted is not None and fitted.scale != pytest.approx(1.0)
    prior = prior_model()
    prior.weights[[FEATURES.index("lm"), FEATURES.index("z_lm")]] = 0.0
    assert list(np.argsort(-fitted.logits(x))) == list(np.argsort(-prior.logits(x)))
    np.testing.assert_allclose(fitted.ranking_score(x), prior.logits(x) - prior.bias, rtol=1e-4, atol=1e-4)


def test_fit_toward_the_prior_moves_weight_to_the_feature_the_probes_favour():
    """With a finite strength the fit may depart from the prior: labels that follow a feature the prior ignores
    change the ranking; with strength inf it is the prior's ranking (Platt)."""
    import numpy as np

    from shelfwise.core.navigation.calibrate import _choose_strength, fit_level
    from shelfwise.core.navigation.decision import prior_model
    from shelfwise.core.navigation.features import FEATURES

    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, len(FEATURES))).astype(np.float32)
    favoured = FEATURES.index("lex_hits")  # weight 0 in every prior
    assert all(prior_model(k).weights[favoured] == 0 for k in ("document", "section", "passage"))
    y = (x[:, favoured] > 1.0).astype(int)
    rows = [(i // 10, x[i], int(y[i])) for i in range(400)]
    strength, cv = _choose_strength(rows, drop_lm=True, kind="section")
    assert np.isfinite(strength) and cv[f"l2={strength:g}"] > cv["prior"]
    fitted = fit_level(rows, drop_lm=True, kind="section", strength=strength)
    assert fitted is not None and fitted.weights[favoured] > 0.5
    prior_order = list(np.argsort(-prior_model("section").logits(x[:10])))
    assert list(np.argsort(-fitted.logits(x[:10]))) != prior_order
    assert int(np.argmax(fitted.logits(x[:10]))) == int(np.argmax(x[:10, favoured]))


def test_calibration_changes_the_order_when_the_probes_favour_another_feature(shelf_store, monkeypatch):
    """End to end on a real store: a prior that trusts only a useless feature (size) is overruled by probes that
    favour the evidence that finds them (cosine and BM25); the trace says the ranking was fitted."""
    from dataclasses import replace

    from shelfwise.core.navigation import decision as decision_mod

    store, cid, emb = shelf_store
    useless = {"log_size": 1.0}
    monkeypatch.setattr(decision_mod, "_PRIOR", useless)
    monkeypatch.setattr(decision_mod, "_PRIOR_BY_KIND", {"passage": useless})
    settings = Settings(readout="embedding", budgets=Budgets(branching=6), rank_fit=True)
    nav_prior = Navigator(store, None, emb, settings, decision=decision_mod.DecisionModel())
    kept = calibrate(store, cid, emb, None, replace(settings, rank_fit=False), n_probes=80)
    assert all(v["ranking"] == "prior (rank fit off)" for v in kept.report["levels"].values())  # the default
    # a stored calibration from before the flag existed (it may have refitted the ranking) is redone, not trusted
    from shelfwise.core.navigation.calibrate import ensure_calibrated
    from shelfwise.core.navigation.snapshots import load_decision, save_decision

    legacy = load_decision(store, cid, emb, None)
    legacy.report.pop("fit_ranking")
    legacy.report["levels"]["passage"]["ranking"] = "legacy"
    save_decision(store, cid, emb, None, legacy)
    from shelfwise.core.navigation.snapshots import model_set

    store.set_meta(f"calibrated_tree:{cid}:{model_set(emb, None)}", snapshot_for(store, cid, emb.model_id).version)
    redone = ensure_calibrated(store, cid, emb, None, replace(settings, rank_fit=False))
    assert redone.report["fit_ranking"] is False and redone.report["levels"]["passage"]["ranking"] != "legacy"
    model = calibrate(store, cid, emb, None, settings, n_probes=80)
    fitted_levels = [k for k, v in model.report["levels"].items() if v["ranking"] != "prior"]
    assert "passage" in fitted_levels, model.report["levels"]
    nav_fit = Navigator(store, None, emb, settings, decision=model)
    query = "the telescope and the galaxy matter here"
    before = nav_prior.navigate(SearchRequest(query, "default"))
    after = nav_fit.navigate(SearchRequest(query, "default"))
    assert [h.node_id for h in after.hits] != [h.node_id for h in before.hits]
    assert "telescope" in after.hits[0].text
    assert "fitted" in after.trace.calibration and "not calibrated" in before.trace.calibration


def test_hybrid_baseline_ranks_by_dense_and_lexical(shelf_store):
    import numpy as np

    from shelfwise.core.navigation.decision import DecisionModel
    from shelfwise.evaluation.retrieval import Methods

    store, cid, emb = shelf_store
    snap = snapshot_for(store, cid, emb.model_id)
    m = Methods(store, cid, snap, emb, None, Settings(readout="embedding"), DecisionModel())
    query = "unique token z21x1x2"
    r = m.hybrid(query, np.asarray(emb.embed_one(query), np.float32))
    top = snap.nodes[r.passages[0]]
    assert "z21x1x2" in top.text and len(r.passages) == len(set(r.passages)) > 10


def test_passage_features_read_straight_off_the_arrays_match_their_subtree_slices(shelf_store):
    """A one-passage candidate's features come from the per-passage arrays at once; a section holding the same
    passage alone would slice them: both must agree, and the neighbour cosine is the best of the passages beside it
    in the same section."""
    import numpy as np

    from shelfwise.core.navigation.features import FEATURES, QueryEvidence, level_features

    store, cid, emb = shelf_store
    snap = snapshot_for(store, cid, emb.model_id)
    nav = Navigator(store, None, emb, Settings())
    ev = nav.evidence(snap, "I keep a garden. How do I prune a seedling?", cid)
    assert isinstance(ev, QueryEvidence) and ev.cos_q is not None
    passages = [n for n in snap.nodes.values() if n.kind == "passage"]
    x = level_features(snap, ev, passages)
    col = {f: x[:, FEATURES.index(f)] for f in FEATURES}
    rows = np.array([p.span[0] for p in passages])
    assert np.array_equal(col["cos_max"], ev.cos[rows]) and np.array_equal(col["cos_top3"], ev.cos[rows])
    assert np.array_equal(col["lex_max"], ev.lex[rows]) and np.array_equal(col["cos_q_max"], ev.cos_q[rows])
    assert np.allclose(col["lex_hits"], np.log1p((ev.lex[rows] > 0).astype(np.float64)))
    assert (col["lex_hits"] > 0).any()
    for i, r in enumerate(rows.tolist()):
        beside = [ev.cos[o] for o in (r - 1, r + 1) if 0 <= o < len(snap.row_parent)
                  and snap.row_parent[o] == snap.row_parent[r]]
        want = max(beside) if beside else ev.cos[r]
        assert col["g_cos_nb"][i] == ev.global_z(np.array([want], np.float32), "cos")[0]
    # a section is sliced: its best passage's cosine is its cos_max
    sections = [n for n in snap.nodes.values() if n.kind == "section"]
    xs = level_features(snap, ev, sections)
    for i, sec in enumerate(sections):
        a, b = sec.span
        assert xs[i, FEATURES.index("cos_max")] == ev.cos[a:b].max()
        assert xs[i, FEATURES.index("g_cos_nb")] == xs[i, FEATURES.index("g_cos_max")]
