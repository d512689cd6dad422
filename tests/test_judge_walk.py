"""The relevance judge inside the walk: which candidates it reads, how its logit enters the decision, the judge
backends (fake, rerank server over HTTP, the shipped GGUF) and the evaluation's judge-only rerank."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.judges import FakeJudge, RemoteJudge, make_judge
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.features import FEATURES, set_judge
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.core.navigation.readout_prompts import judge_text
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Budgets, Settings
from shelfwise.evaluation.retrieval import Methods
from tests.fakes import serving
from tests.test_navigation import shelf_store  # noqa: F401  (fixture)


class PinJudge(FakeJudge):
    """Scores a text 6 when it holds ``token``, else -2: a judge whose opinion differs from the embedder's."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.seen: list[list[str]] = []

    def score(self, query, texts):
        self.calls += 1
        self.pairs += len(texts)
        self.seen.append(list(texts))
        return np.array([6.0 if self.token in t else -2.0 for t in texts], np.float32)


def _settings(**changes) -> Settings:
    return Settings(readout="embedding", budgets=Budgets(branching=6, keep=2, passages=5, hybrid=0), **changes)


def test_set_judge_fills_read_rows_and_floors_the_rest():
    x = np.zeros((4, len(FEATURES)), np.float32)
    set_judge(x, [0, 2], [3.0, -1.0])
    z = x[:, FEATURES.index("z_judge")]
    assert x[0, FEATURES.index("judge")] == 3.0 and x[1, FEATURES.index("judge")] == 0.0
    assert z[0] > 0 > z[2]
    assert z[1] == z[3] == z[2]  # unread rows never rank above a read, rejected one


def test_judge_reads_at_most_judge_top_per_level_and_shows_in_the_trace(shelf_store):  # noqa: F811
    store, _cid, emb = shelf_store
    fake = FakeJudge()
    nav = Navigator(store, None, emb, _settings(judge_top=3), judge=fake)
    res = nav.navigate(SearchRequest("compost mulch seedling", "default"))
    judged_levels = [lvl for lvl in res.trace.levels if lvl.judged]
    assert {lvl.label for lvl in judged_levels} <= {"sections", "passages"} and judged_levels
    assert all(lvl.judged <= 3 for lvl in res.trace.levels)
    assert res.trace.judged == fake.pairs and res.trace.judge == "fake-judge"
    shown = [c for lvl in judged_levels for c in lvl.candidates if "judge" in c.features]
    assert 0 < len(shown) <= 3 * len(judged_levels)
    assert res.trace.tokens == 0  # the judge is not the generative model: no LM tokens


def test_the_judges_opinion_changes_the_walks_answer(shelf_store):  # noqa: F811
    store, cid, emb = shelf_store
    query = "compost mulch prune"
    plain = Navigator(store, None, emb, _settings()).navigate(SearchRequest(query, "default"))
    # the judge prefers a passage the embedder ranks below first among those it reads
    target = next(c for c in plain.trace.levels[-1].candidates[1:6] if c.kind == "passage")
    snap = snapshot_for(store, cid, emb.model_id)
    token = next(w for w in snap.nodes[target.node_id].text.split() if w.startswith("z"))
    pin = PinJudge(token)
    judged = Navigator(store, None, emb, _settings(judge_top=12), judge=pin).navigate(SearchRequest(query, "default"))
    assert plain.hits[0].node_id != target.node_id
    assert judged.hits[0].node_id == target.node_id
    off = Navigator(store, None, emb, _settings(judge_levels=()), judge=pin).navigate(SearchRequest(query, "default"))
    assert [h.node_id for h in off.hits] == [h.node_id for h in plain.hits]  # no judged level: no change


def test_judge_reads_title_heading_path_and_text(shelf_store):  # noqa: F811
    store, _cid, emb = shelf_store
    pin = PinJudge("nothing")
    Navigator(store, None, emb, _settings(judge_levels=("passage",)), judge=pin).navigate(
        SearchRequest("telescope orbit", "default"))
    text = pin.seen[-1][0]
    assert text.startswith("Astronomy handbook") and " > Astronomy part " in text and ": astronomy note" in text


def test_make_judge_specs(tmp_path):
    assert make_judge(None) is None and make_judge("off") is None and make_judge("") is None
    assert isinstance(make_judge("fake"), FakeJudge)
    with pytest.raises(BackendError, match="no judge model"):
        make_judge(str(tmp_path / "missing.gguf"))
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all")
    with pytest.raises(BackendError, match="cannot load the judge"):
        make_judge(str(bad))
    assert Settings().judge is None  # off unless the user switches it on


class _Rerank(BaseHTTPRequestHandler):
    mode = "logit"

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        docs = body["documents"]
        q = set(body["query"].lower().split())
        scores = [len(q & set(d.lower().split())) for d in docs]
        if self.mode == "prob":
            scores = [s / (1 + max(scores)) for s in scores]
        results = sorted(({"index": i, "relevance_score": float(s)} for i, s in enumerate(scores)),
                         key=lambda r: -r["relevance_score"])
        if self.mode == "short":
            results = results[:1]
        data = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def rerank_server():
    with serving(_Rerank) as url:
        yield url, _Rerank
    _Rerank.mode = "logit"


def test_remote_judge_reads_a_rerank_server_in_input_order(rerank_server):
    url, handler = rerank_server
    judge = make_judge(url)
    assert isinstance(judge, RemoteJudge)
    texts = ["nothing here", "red apples and pears", "apples"]
    s = judge.score("red apples", texts)
    assert list(s) == [0.0, 2.0, 1.0]  # results came back sorted by score; read back by index
    handler.mode = "prob"  # a server that answers probabilities: turned into logits (same order)
    s = judge.score("red apples", texts)
    assert np.argsort(-s).tolist() == [1, 2, 0] and s[0] < 0
    handler.mode = "short"
    with pytest.raises(BackendError, match="scored 1 of 3"):
        judge.score("red apples", texts)
    judge.close()


def test_rerank_judge_method_orders_dense_top_by_the_judge(shelf_store):  # noqa: F811
    store, cid, emb = shelf_store
    snap = snapshot_for(store, cid, emb.model_id)
    q = "the recipe and the oven"
    vec = np.asarray(emb.embed_one(q), np.float32)
    plain = Methods(store, cid, snap, emb, None, _settings(), DecisionModel())
    dense = plain.dense(q, vec, 20).passages
    token = next(w for w in snap.nodes[dense[-1]].text.split() if w.startswith("z"))
    pin = PinJudge(token)
    r = Methods(store, cid, snap, emb, None, _settings(), DecisionModel(), judge=pin).rerank_judge(q, vec, n=20)
    assert r.passages[0] == dense[-1] and sorted(r.passages) == sorted(dense) and r.cost.judged == 20
    assert r.passages[1:] == dense[:-1]  # ties keep the dense order
    assert pin.seen[0][0] == judge_text(snap, snap.nodes[dense[0]])
    with pytest.raises(ValueError, match="needs a relevance judge"):
        plain.rerank_judge(q, vec)


def test_shipped_judge_in_the_walk(shelf_store):  # noqa: F811
    """The real GGUF judge (llama.cpp) reads the walk's candidates: finite logits, one batch per judged level."""
    store, _cid, emb = shelf_store
    judge = make_judge("bundled")
    assert judge is not None
    try:
        res = Navigator(store, None, emb, _settings(judge_top=8), judge=judge).navigate(
            SearchRequest("compost for seedlings", "default"))
    finally:
        judge.close()
    vals = [c.features["judge"] for lvl in res.trace.levels for c in lvl.candidates if "judge" in c.features]
    assert 0 < len(vals) <= 16 and all(np.isfinite(vals))
    assert res.trace.judge == judge.model_id and res.trace.judge.startswith("gguf:")  # the file's identity


def test_cli_and_window_show_the_judges_reading(shelf_store):  # noqa: F811
    from shelfwise.app.cli.render import render_trace, result_json
    from shelfwise.app.gui.walk_view import candidate_tooltip

    store, _cid, emb = shelf_store
    res = Navigator(store, None, emb, _settings(judge_top=4), judge=FakeJudge()).navigate(
        SearchRequest("compost mulch", "default"))
    lines = render_trace(res.trace)
    assert any("judge read" in ln for ln in lines) and any("[judge " in ln for ln in lines)
    assert any(ln.startswith("Relevance judge: fake-judge") for ln in lines)
    assert result_json(res)["judged"] == res.trace.judged > 0
    read = next(c for lvl in res.trace.levels for c in lvl.candidates if "judge" in c.features)
    assert "relevance judge P = " in candidate_tooltip(read)
