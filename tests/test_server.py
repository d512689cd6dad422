"""The encoder on llama.cpp's ``llama-server`` (``core/models/remote/embedder.py``, ``packaging/server.sh``).

Transport and framing against a small stdlib stand-in of llama-server's endpoints; fidelity against a real
``llama-server`` built by ``bash packaging/server.sh build`` on a free loopback port with the bundled MiniLM GGUF
(and EmbeddingGemma), compared with the in-process encoder on the same file: cosine >= 0.999 per text, with
``--parallel 4`` and several batched requests in flight. The real-server tests skip, saying how to build it, only
where the binary has not been built.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.embedder import EMBEDDINGGEMMA, MINILM
from shelfwise.core.models.remote.embedder import RemoteEmbedder, cut_points, is_server_url, server_model
from tests.fakes import serving

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- pure helpers


def test_server_urls_are_told_from_model_names() -> None:
    assert is_server_url("http://127.0.0.1:8181") and is_server_url(" HTTPS://encoders.lan ")
    assert not is_server_url("minilm") and not is_server_url("/models/x.gguf") and not is_server_url(None)


def test_model_identity_is_the_in_process_one_only_with_a_hashed_alias() -> None:
    models = {"data": [{"id": "x", "meta": {"n_params": 22_565_376, "size": 25_000_000, "n_embd": 384,
                                            "n_ctx": 512}}]}
    hashed = server_model(models, {"model_alias": "all-MiniLM-L6-v2-q8_0.gguf:0123456789abcdef",
                                   "model_path": "/srv/m/all-MiniLM-L6-v2-q8_0.gguf", "total_slots": 4})
    assert hashed.model_id == "all-MiniLM-L6-v2-q8_0.gguf:0123456789abcdef"
    assert hashed.slots == 4 and hashed.n_ctx == 512 and hashed.profile() is MINILM
    plain = server_model(models, {"model_alias": "all-MiniLM-L6-v2-q8_0.gguf",
                                  "model_path": "/srv/m/all-MiniLM-L6-v2-q8_0.gguf"})
    # no hash declared: an id of the server's own form, which no in-process encoder has
    assert plain.model_id == "all-MiniLM-L6-v2-q8_0.gguf@server:22565376:25000000"
    gemma = server_model(models, {"model_alias": "embeddinggemma-300m-q8_0.gguf:fedcba9876543210"})
    assert gemma.profile() is EMBEDDINGGEMMA
    with pytest.raises(BackendError, match="lists no model"):
        server_model({"data": []}, {})


def test_cut_points_follow_the_in_process_tokenizer_loop() -> None:
    assert cut_points("short text", 254) == [10]
    long = "word " * 3000  # 15,000 characters
    points = cut_points(long, 254)
    assert points[0] <= 254 * 8 and long[points[0]] == " " and points[-1] == len(long)
    assert points == sorted(points)


# --------------------------------------------------------------------------- a stand-in llama-server

DIM = 8


class _Fake:
    """llama-server's endpoints as the encoder uses them: words are tokens (id = a hash), [CLS]=1 / [SEP]=2
    frame a text, a vector is a function of the token ids (so order and framing show)."""

    def __init__(self) -> None:
        self.alias = "fake-enc.gguf:00112233aabbccdd"
        self.fail_embeddings = 0  # answer 503 to this many embeddings requests first
        self.delay = 0.0
        self.lock = threading.Lock()
        self.batches: list[int] = []
        self.active = 0
        self.max_active = 0
        self.seen: list[list[int]] = []
        self.down = False  # hang up on every request, kept-alive connections included (a killed server)


def _tok(word: str) -> int:
    return 3 + sum(map(ord, word)) % 997


def _vec(ids: list[int]) -> list[float]:
    rng = np.random.default_rng(sum(i * (k + 1) for k, i in enumerate(ids)))
    return [float(x) for x in rng.normal(size=DIM) * 3.0]


def _handler(fake: _Fake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, obj: Any) -> None:
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _hang_up(self) -> bool:
            if fake.down:
                self.close_connection = True
            return fake.down

        def do_GET(self) -> None:
            if self._hang_up():
                return
            if self.path == "/v1/models":
                self._send(200, {"data": [{"id": fake.alias, "meta": {"n_params": 1, "size": 2, "n_embd": DIM,
                                                                      "n_ctx": 512}}]})
            elif self.path == "/props":
                self._send(200, {"model_alias": fake.alias, "model_path": "/m/fake-enc.gguf", "total_slots": 4})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self._hang_up():
                return
            if self.path == "/tokenize":
                assert body["parse_special"] is False
                ids = [_tok(w) for w in body["content"].split()]
                self._send(200, {"tokens": [1, *ids, 2] if body["add_special"] else ids})
                return
            with fake.lock:
                fake.active += 1
                fake.max_active = max(fake.max_active, fake.active)
                fail = fake.fail_embeddings > 0
                fake.fail_embeddings -= 1 if fail else 0
            try:
                time.sleep(fake.delay)
                if fail:
                    self._send(503, {"error": {"message": "loading model"}})
                    return
                seqs = body["input"]
                with fake.lock:
                    fake.batches.append(len(seqs))
                    fake.seen += seqs
                rows = [{"index": i, "embedding": _vec(s)} for i, s in enumerate(seqs)]
                self._send(200, {"data": rows[::-1]})  # out of order on purpose: the client sorts by index
            finally:
                with fake.lock:
                    fake.active -= 1

    return Handler


@pytest.fixture
def fake() -> Iterator[tuple[str, _Fake]]:
    f = _Fake()
    with serving(_handler(f)) as url:
        yield url, f


def _expected(words: str) -> np.ndarray:
    v = np.asarray(_vec([1, *[_tok(w) for w in words.split()], 2]), np.float32)
    return v / np.linalg.norm(v)


def test_texts_are_framed_batched_and_normalised(fake: tuple[str, _Fake]) -> None:
    url, f = fake
    with contextlib.closing(RemoteEmbedder(url, batch=4, concurrency=3, window=16)) as emb:
        assert emb.model_id == f.alias and emb.dim == DIM and emb.profile is MINILM
        texts = [f"text number {i} about travel" for i in range(10)]
        out = emb.embed(texts)
        assert out.shape == (10, DIM) and out.dtype == np.float32
        for row, text in zip(out, texts, strict=True):
            np.testing.assert_allclose(row, _expected(text), rtol=1e-5, atol=1e-6)
        assert sorted(f.batches[1:]) == [2, 4, 4]  # after the probe: 10 texts in requests of 4
        long = " ".join(f"w{i}" for i in range(40))
        assert emb.tokenize(long) == [1, *[_tok(f"w{i}") for i in range(14)], 2]  # cut to the window of 16
        np.testing.assert_allclose(emb.embed_query("a question"), _expected("a question"), rtol=1e-5, atol=1e-6)
        assert emb.embed([]).shape == (0, DIM)
        with pytest.raises(TypeError):
            emb.embed("one string")


def test_requests_run_side_by_side(fake: tuple[str, _Fake]) -> None:
    url, f = fake
    f.delay = 0.05
    with contextlib.closing(RemoteEmbedder(url, batch=2, concurrency=8)) as emb:
        assert emb.concurrency == 4  # no more in flight than the server's 4 slots
        emb.embed([f"t {i}" for i in range(16)])
    assert f.max_active >= 2  # 8 requests of 2 texts, several in flight


def test_a_busy_server_is_retried(fake: tuple[str, _Fake]) -> None:
    url, f = fake
    with contextlib.closing(RemoteEmbedder(url, backoff=0.01)) as emb:
        f.fail_embeddings = 2
        np.testing.assert_allclose(emb.embed(["hello there"])[0], _expected("hello there"), rtol=1e-5, atol=1e-6)


def test_a_server_that_keeps_failing_names_itself(fake: tuple[str, _Fake]) -> None:
    url, f = fake
    with contextlib.closing(RemoteEmbedder(url, backoff=0.01, retries=1)) as emb:
        f.fail_embeddings = 5
        with pytest.raises(BackendError, match=r"encoder server at .*HTTP 503: loading model"):
            emb.embed(["hello"])


def test_a_slow_server_times_out_with_a_message(fake: tuple[str, _Fake]) -> None:
    url, f = fake
    with contextlib.closing(RemoteEmbedder(url, timeout=0.3)) as emb:
        f.delay = 1.0
        with pytest.raises(BackendError, match=r"encoder server at .* did not answer /v1/embeddings within 0.3 s"):
            emb.embed(["hello"])


def test_a_server_that_is_not_there_says_how_to_start_one() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(BackendError, match=r"cannot reach the encoder server .*packaging/server.sh start"):
        RemoteEmbedder(f"http://127.0.0.1:{port}", retries=0)


# --------------------------------------------------------------------------- the fallback: the same weights in process


def test_without_a_local_copy_a_stopped_server_is_an_error_that_says_what_to_do() -> None:
    from shelfwise.core.models.remote.fallback import open_served_embedder

    f = _Fake()
    with serving(_handler(f)) as url:
        served = open_served_embedder(url, retries=0)
        assert served.ran.startswith("on the encoder server") and served.model_id == f.alias
        served.embed(["before"])
        f.down = True
    with pytest.raises(BackendError, match=r"cannot reach the encoder server.*No copy of its model"):
        served.embed(["after the server stopped"])
    served.close()
    with pytest.raises(BackendError, match="No copy of its model"):  # down at start: the id it gave last time
        open_served_embedder(url, retries=0)


def test_a_server_never_reached_has_no_fallback() -> None:
    from shelfwise.core.models.remote.fallback import open_served_embedder

    with pytest.raises(BackendError, match="never reached from this machine"):
        open_served_embedder(f"http://127.0.0.1:{_free_port()}", retries=0)


@pytest.mark.model
def test_the_same_weights_in_process_stand_in_for_a_stopped_server() -> None:
    from shelfwise.core.models.encoders.embedder import Embedder, bundled_embedder_path
    from shelfwise.core.models.remote.fallback import open_served_embedder

    path = bundled_embedder_path()
    f = _Fake()
    f.alias = _alias(path)  # the stand-in claims MiniLM's identity: its local copy is the twin
    with serving(_handler(f)) as url:
        served = open_served_embedder(url, retries=0, n_threads=1)
        from_server = served.embed(["a passage"])
        f.down = True
    try:
        assert served.ran.startswith("on the encoder server")
        assert np.allclose(from_server[0], _expected("a passage"), atol=1e-6)
        after = served.embed(["a passage"])  # the server is gone: MiniLM in process, same model id
        assert served.ran.startswith("in process") and served.model_id == f.alias
        with Embedder(path, n_threads=1) as local:
            np.testing.assert_allclose(after, local.embed(["a passage"]), atol=1e-6)
    finally:
        served.close()
    restarted = open_served_embedder(url, retries=0, n_threads=1)  # down at start: its last id finds the twin
    try:
        assert restarted.ran.startswith("in process") and restarted.model_id == f.alias
        assert "did not answer" in restarted.describe()
    finally:
        restarted.close()


# --------------------------------------------------------------------------- a real llama-server


def llama_server_binary() -> Path | None:
    """``SHELFWISE_LLAMA_SERVER``, else what ``packaging/server.sh build`` made (None when it has not)."""
    env = os.environ.get("SHELFWISE_LLAMA_SERVER")
    if env:
        return Path(env)
    done = subprocess.run(["bash", str(ROOT / "packaging" / "server.sh"), "path"], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(model: Path, *args: str, alias: str | None = None) -> Iterator[str]:
    """``llama-server -m model args`` on a free loopback port until the block ends; its URL."""
    binary = llama_server_binary()
    if binary is None or not binary.is_file():
        pytest.skip("llama-server is not built here: bash packaging/server.sh build (about 9 minutes on 2 cores)")
    port = _free_port()
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "--threads", "2", *args]
    if alias:
        cmd += ["--alias", alias]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        import httpx

        while True:
            if proc.poll() is not None:
                said = proc.stdout.read()[-2000:] if proc.stdout else ""
                pytest.fail(f"llama-server exited ({proc.returncode}): {said}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail("llama-server did not become healthy within 60 s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


TEXTS = [
    "How do I claim travel expenses?",
    "Meal allowance rules for business trips abroad",
    "The committee meets on the first Monday of every month.",
    "Wie beantrage ich Reisekosten?",
    "[SEP] a text that holds a special token's spelling <eos> twice",
    "",
    "Überprüfung der Jahresabschlüsse durch externe Prüfer (§ 316 HGB).",
    " ".join(f"sentence {i} of a long passage about the reimbursement of costs." for i in range(80)),  # > window
] + [f"passage {i}: the policy covers item {i * 7} and its conditions." for i in range(24)]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)))


def _alias(path: Path) -> str:
    """The alias ``packaging/server.sh start`` declares for the file (its identity)."""
    done = subprocess.run(["bash", str(ROOT / "packaging" / "server.sh"), "alias", "encoder", str(path)],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    return done.stdout.strip()


@pytest.mark.model
def test_minilm_on_the_server_gives_the_in_process_vectors() -> None:
    from shelfwise.core.models.encoders.embedder import Embedder, bundled_embedder_path

    path = bundled_embedder_path()
    with Embedder(path, n_threads=1) as local:
        want_docs, want_queries = local.embed(TEXTS), local.embed_queries(TEXTS[:4])
        want_tokens = [local.tokenize(t) for t in TEXTS]
        local_id = local.model_id
    with llama_server(path, "--embedding", "--pooling", "mean", "--parallel", "4", "--ctx-size", "2048",
                      "--batch-size", "2048", "--ubatch-size", "2048", alias=_alias(path)) as url:
        with contextlib.closing(RemoteEmbedder(url, batch=5, concurrency=4)) as remote:
            assert remote.model_id == local_id  # the same weights: the library may mix their vectors
            assert [remote.tokenize(t) for t in TEXTS] == want_tokens
            # 32 texts in 7 requests, 4 in flight, over 4 slots: the batched case that has gone wrong upstream
            got = remote.embed(TEXTS)
            queries = remote.embed_queries(TEXTS[:4])
    cos = _cosines(got, want_docs)
    assert cos.min() >= 0.999, cos
    assert _cosines(queries, want_queries).min() >= 0.999


@pytest.mark.model
def test_embeddinggemma_prompts_on_the_server_match_in_process(embeddinggemma_model: Path) -> None:
    from shelfwise.core.models.encoders.embedder import Embedder

    texts = TEXTS[:8]
    with Embedder(embeddinggemma_model, n_threads=2) as local:
        local_id = local.model_id
        want_docs = local.embed(texts)
        want_pair = local.embed_query_and_documents(texts[0], texts[1:3])
    with llama_server(embeddinggemma_model, "--embedding", "--pooling", "mean", "--parallel", "2",
                      "--ctx-size", "1024", "--batch-size", "1024", "--ubatch-size", "1024") as url:
        with contextlib.closing(RemoteEmbedder(url, batch=3, concurrency=2)) as remote:
            assert remote.profile is EMBEDDINGGEMMA
            # no alias: the file the server reports is on this machine, so it is the in-process model
            assert remote.model_id == local_id
            got = remote.embed(texts)
            pair = remote.embed_query_and_documents(texts[0], texts[1:3])
    assert _cosines(got, want_docs).min() >= 0.999
    assert _cosines(pair, want_pair).min() >= 0.999


@pytest.mark.model
def test_the_judge_on_the_server_reads_the_pairs_the_in_process_judge_reads() -> None:
    from shelfwise.core.models.encoders.cross_encoder import Judge, bundled_judge_path
    from shelfwise.core.models.encoders.judges import make_judge
    from shelfwise.core.models.remote.judge import ServerJudge

    path = bundled_judge_path()
    question = "How do I claim travel expenses?"
    long_query = "We moved offices last spring and my manager approved a trip to the Berlin fair; " * 8 + question
    texts = [TEXTS[1], TEXTS[2], TEXTS[6], TEXTS[7], "Submit expense claims within 30 days of your trip."]
    with Judge(path, n_threads=1) as local:
        want = {q: local.score(q, texts) for q in (question, long_query)}
        pairs = local.pairs(long_query, texts)
        local_id = local.model_id
    with llama_server(path, "--reranking", "--parallel", "2", "--ctx-size", "1024", "--batch-size", "1024",
                      "--ubatch-size", "1024", alias=_alias(path)) as url:
        judge = make_judge(url)
        assert isinstance(judge, ServerJudge) and judge.model_id == local_id and judge.whole_query
        try:
            # a query and a text longer than the judge's caps are clipped to the very ids it reads in process
            query, docs = judge.clipped(long_query, texts)
            tok = judge._tokens
            assert [[101, *tok(query, 999), 102, *tok(d, 999), 102] for d in docs] == pairs
            short, long = judge.score(question, texts), judge.score(long_query, texts)
        except BaseException:
            judge.close()
            raise
    try:  # the server is gone: the same judge in process stands in
        after = judge.score(question, texts)
        assert judge.ran.startswith("in process")
    finally:
        judge.close()
    np.testing.assert_allclose(after, want[question], atol=1e-5)
    # the same ids; scores move with the batch a pair shares (in process too: up to ~0.05 logits measured)
    np.testing.assert_allclose(short, want[question], atol=0.1)
    np.testing.assert_allclose(long, want[long_query], atol=0.1)
    assert np.argsort(-short).tolist() == np.argsort(-want[question]).tolist()


@pytest.mark.model
def test_shelfwise_models_names_the_encoder_server(fake: tuple[str, _Fake], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from shelfwise.app.cli.main import main

    url, f = fake
    out = CliRunner().invoke(main, ["--db", str(tmp_path / "lib.db"), "--embedder", url, "models", "--json"])
    assert out.exit_code == 0, out.output
    emb = json.loads(out.output[out.output.index("{"):])["embedder"]
    assert emb["server"] and emb["model_id"] == f.alias and emb["dim"] == DIM
    assert emb["path"] == f"on the encoder server at {url}"
