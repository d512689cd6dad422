"""The remote backend: transport logic against small stdlib HTTP servers, and real behaviour against a real
llama-cpp-python server on loopback compared with the in-process llama.cpp backend (``@pytest.mark.model``).

Tolerances of the real comparison (same prompt texts, same GGUF): P(yes) within 0.06 (the two evaluate the
prompt in different batch splits, which moved P(yes) by up to 0.044 here), choice probabilities within 0.05
(0.031 measured), likelihood mean log-probability within 0.1 nats/token (0.01 measured with this 8-token
query; a 4-token one differed by 0.10). The likelihood texts are tiny on purpose: llama-cpp-python's server
sorts the whole 262k vocabulary in Python for every echoed prompt token (~0.5 s each on an idle core).
"""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from shelfwise.core.models.backend import BackendError, Cost, Scores
from shelfwise.core.models.identity import model_identity
from shelfwise.core.models.remote.backend import RemoteBackend, query_logprobs, readout_logprobs, top_logprobs
from shelfwise.core.navigation.parallel import pool_scores, request_concurrency, score_requests
from shelfwise.core.navigation.readout_prompts import binary_prompt
from tests.fakes import serving

# --------------------------------------------------------------------------- a scriptable stdlib server


class _Script:
    """What the fake server answers; records connections and concurrency."""

    def __init__(self) -> None:
        self.fail_first = 0  # answer 503 to this many completion requests first
        self.delay = 0.0
        self.top: dict[str, float] = {" Yes": -0.5, " No": -1.5, " A": -1.0, " B": -2.0}
        self.chat_format = False
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        self.ports: set[int] = set()
        self.requests = 0


def _handler(script: _Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, obj: Any, ctype: str = "application/json") -> None:
            body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            script.ports.add(self.client_address[1])
            self._send(200, {"object": "list", "data": [{"id": "fake-model"}]})

        def do_POST(self) -> None:
            script.ports.add(self.client_address[1])
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.endswith("tokenize"):  # a server without a tokenize endpoint (not counted)
                self._send(404, {"error": {"message": "not found"}})
                return
            with script.lock:
                script.requests += 1
                script.active += 1
                script.max_active = max(script.max_active, script.active)
                fail = script.fail_first > 0
                script.fail_first -= 1 if fail else 0
            try:
                time.sleep(script.delay)
                if fail:
                    self._send(503, {"error": {"message": "busy"}})
                elif body.get("max_tokens") == 99:
                    self._send(400, {"error": {"message": "bad max_tokens"}})
                elif body.get("stream"):
                    self._stream(body)
                else:
                    self._send(200, self._completion(body))
            finally:
                with script.lock:
                    script.active -= 1

        def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
            if script.chat_format:
                lp: dict[str, Any] = {
                    "content": [
                        {
                            "token": " Yes",
                            "logprob": -0.5,
                            "top_logprobs": [{"token": k, "logprob": v} for k, v in script.top.items()],
                        }
                    ]
                }
            else:
                lp = {
                    "tokens": [" Yes"],
                    "text_offset": [0],
                    "token_logprobs": [-0.5],
                    "top_logprobs": [script.top],
                }
            return {
                "choices": [{"text": " Yes", "logprobs": lp, "finish_reason": "length"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            }

        def _stream(self, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [
                ": ping",
                *(
                    f"data: {json.dumps({'choices': [{'text': w, 'finish_reason': None}]})}"
                    for w in ["Hello", " wor", "ld", " STOP", " never"]
                ),
                "data: [DONE]",
            ]
            for e in events:
                chunk = (e + "\r\n\r\n").encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@pytest.fixture
def fake() -> Iterator[tuple[str, _Script]]:
    script = _Script()
    with serving(_handler(script)) as url:
        yield url, script


def _drain(gen: Any) -> tuple[list[str], Any]:
    """A streaming generate(): the pieces it yielded and its Generation result."""
    pieces = []
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as done:
            return pieces, done.value


# --------------------------------------------------------------------------- pure helpers


def test_readout_bounds_a_missing_token_by_the_smallest_listed() -> None:
    values, bounded = readout_logprobs({" Yes": -0.2, " Maybe": -3.0}, [" Yes", " No"])
    assert values == [-0.2, -3.0] and bounded == 1


def test_top_logprobs_reads_both_formats() -> None:
    legacy = {"logprobs": {"top_logprobs": [{" Yes": -0.1, " No": -2.0}]}}
    chat = {
        "logprobs": {
            "content": [
                {"top_logprobs": [{"token": " Yes", "logprob": -0.1}, {"token": " No", "logprob": -2.0}]}
            ]
        }
    }
    assert top_logprobs(legacy) == top_logprobs(chat) == {" Yes": -0.1, " No": -2.0}


def test_query_logprobs_takes_tokens_overlapping_the_query() -> None:
    prompt = "ctx cand.\nQ?"  # the query "\nQ?" starts at 9; the token ".\n" straddles the boundary
    choice = {
        "logprobs": {
            "tokens": ["ctx", " cand", ".\n", "Q", "?", " gen"],
            "text_offset": [0, 3, 8, 10, 11, 12],
            "token_logprobs": [None, -1.0, -2.0, -3.0, -4.0, -9.0],
        }
    }
    assert query_logprobs(choice, 9, len(prompt)) == [-2.0, -3.0, -4.0]


def test_score_requests_keeps_input_order_and_bounds_concurrency() -> None:
    lock = threading.Lock()
    state = {"active": 0, "max": 0}

    def fn(x: int) -> int:
        with lock:
            state["active"] += 1
            state["max"] = max(state["max"], state["active"])
        time.sleep(random.uniform(0.0, 0.02))
        with lock:
            state["active"] -= 1
        return x * x

    chunks = list(range(20))
    assert score_requests(fn, chunks, 3) == [x * x for x in chunks]
    assert 1 < state["max"] <= 3
    assert score_requests(fn, chunks, 1) == [x * x for x in chunks]


def test_score_requests_reraises_and_pools_like_sequential() -> None:
    def bad(x: int) -> int:
        if x == 2:
            raise BackendError("boom")
        return x

    with pytest.raises(BackendError, match="boom"):
        score_requests(bad, [0, 1, 2, 3], 4)
    parts = [Scores([0.1, 0.2], Cost(1, 5)), Scores([0.3], Cost(1, 7))]
    pooled = pool_scores(parts)
    assert pooled.values == [0.1, 0.2, 0.3] and pooled.cost.requests == 2 and pooled.cost.tokens == 12


# --------------------------------------------------------------------------- transport against stdlib servers


def test_binary_and_keep_alive(fake: tuple[str, _Script]) -> None:
    url, script = fake
    with RemoteBackend(url, max_concurrency=1) as rb:
        assert rb.model_id == "fake-model"
        s = rb.binary("ctx ", ["q1", "q2", "q3"])
        assert s.values == pytest.approx([0.7310585786] * 3)
        assert s.cost.requests == 3 and s.cost.tokens == 33
    assert len(script.ports) == 1  # one keep-alive connection served the probe and every request


def test_chat_style_logprobs(fake: tuple[str, _Script]) -> None:
    url, script = fake
    script.chat_format = True
    with RemoteBackend(url) as rb:
        assert rb.binary("c", ["q"]).values == pytest.approx([0.7310585786])


def test_retries_5xx_then_succeeds_and_never_exceeds_concurrency(fake: tuple[str, _Script]) -> None:
    url, script = fake
    with RemoteBackend(url, max_concurrency=2, backoff=0.01) as rb:
        rb.probe()
        script.fail_first = 2
        script.delay = 0.05
        s = rb.binary("c", [f"q{i}" for i in range(8)])
        assert len(s.values) == 8
        assert script.max_active <= 2


def test_client_errors_are_not_retried_and_carry_the_servers_message(fake: tuple[str, _Script]) -> None:
    url, script = fake
    with RemoteBackend(url) as rb:
        rb.probe()
        before = script.requests
        with pytest.raises(BackendError, match="bad max_tokens"):
            next(iter(rb.generate("x", max_tokens=99)))
        assert script.requests == before + 1


def test_generate_streams_server_sent_events_and_cuts_at_stop(fake: tuple[str, _Script]) -> None:
    url, _ = fake
    with RemoteBackend(url) as rb:
        pieces, result = _drain(rb.generate("x", stop=[" STOP"]))
    assert "".join(pieces) == "Hello world" == result.text
    assert result.stopped_by == "stop"


def test_unreachable_server_gives_a_clear_error_quickly() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    rb = RemoteBackend(f"http://127.0.0.1:{port}", retries=2, backoff=0.05)
    t0 = time.perf_counter()
    with pytest.raises(BackendError, match=r"cannot reach the decision server .*Is it running"):
        rb.binary("c", ["q"])
    assert time.perf_counter() - t0 < 2


def test_silent_server_times_out_within_the_timeout_without_retrying() -> None:
    """A socket that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        rb = RemoteBackend(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=1.0, retries=3)
        t0 = time.perf_counter()
        with pytest.raises(BackendError, match=r"did not answer /v1/models within 1 s"):
            rb.binary("c", ["q"])
        assert time.perf_counter() - t0 < 2.5  # one timeout, no retries
        assert rb.http.in_flight == 0
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        listener.close()


def test_request_concurrency_of_backends() -> None:
    assert request_concurrency(RemoteBackend("http://127.0.0.1:9", max_concurrency=4)) == 4
    from shelfwise.core.models.fake import FakeBackend

    assert request_concurrency(FakeBackend()) == 1


# --------------------------------------------------------------------------- a real llama-cpp-python server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``python -m llama_cpp.server`` on loopback as a subprocess (log in a temporary file)."""

    def __init__(self, model: Path, port: int, log: Path, n_ctx: int = 4096) -> None:
        self.model, self.port, self.log, self.n_ctx = model, port, log, n_ctx
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"http://127.0.0.1:{port}"

    def start(self, ready_timeout: float = 180) -> None:
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--interrupt_requests",
            "false",
            "--verbose",
            "false",
        ]
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as c:
                    c.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if c.recv(12).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.kill()
        pytest.fail(f"llama_cpp.server not ready after {ready_timeout} s:\n{self.tail()}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""


def _server_deps() -> None:
    for mod in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        pytest.importorskip(mod, reason="llama-cpp-python's server extra is not installed")


@pytest.fixture(scope="module")
def server(bundled_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    _server_deps()
    srv = Server(bundled_model, _free_port(), tmp_path_factory.mktemp("server") / "server.log")
    srv.start()
    try:
        yield srv
    finally:
        srv.kill()


@pytest.fixture(scope="module")
def remote(server: Server) -> Iterator[RemoteBackend]:
    with RemoteBackend(server.url, timeout=300, max_concurrency=2) as rb:
        yield rb


LISTING = [
    "Travel policy: meals are refunded up to 30 euros a day",
    "Holiday allowance: 25 days a year",
    "IT security: change passwords every 90 days",
]


@pytest.mark.model
def test_real_probe_and_model_id(remote: RemoteBackend, bundled_model: Path) -> None:
    caps = remote.probe()
    # the server lists the file by its path: the model is named as the same file in process is
    assert caps.top_logprobs and remote.api.model_id == str(bundled_model)
    assert remote.model_id == model_identity(bundled_model)
    assert remote.count_tokens(" Yes") == 1


@pytest.mark.model
def test_real_binary_matches_in_process(remote: RemoteBackend, llama_backend: Any) -> None:
    context, questions = binary_prompt("how much can I claim for meals when travelling?", LISTING)
    local = llama_backend.binary(context, questions)
    far = remote.binary(context, questions)
    assert far.cost.requests == len(questions)
    diffs = [abs(a - b) for a, b in zip(local.values, far.values, strict=True)]
    assert max(diffs) < 0.06, (local.values, far.values)


@pytest.mark.model
def test_real_likelihood_matches_in_process(remote: RemoteBackend, llama_backend: Any) -> None:
    context, cands, query = "Text:", [" Cats purr.", " Tax rose."], "\nQ: do cats purr?"
    local = llama_backend.likelihood(context, cands, query)
    far = remote.likelihood(context, cands, query)
    assert far.n_tokens == local.n_tokens
    assert max(abs(a - b) for a, b in zip(local.mean, far.mean, strict=True)) < 0.1, (local.mean, far.mean)
    assert far.mean[0] > far.mean[1]


@pytest.mark.model
def test_real_generate_streams(remote: RemoteBackend) -> None:
    pieces, result = _drain(remote.generate("The capital of France is", max_tokens=4))
    assert len(pieces) >= 2 and "".join(pieces) == result.text and result.stopped_by == "length"


@pytest.mark.model
def test_real_server_killed_mid_request_then_restarted(bundled_model: Path, tmp_path: Path) -> None:
    _server_deps()
    srv = Server(bundled_model, _free_port(), tmp_path / "server.log", n_ctx=1024)
    srv.start()
    try:
        rb = RemoteBackend(srv.url, timeout=120, retries=2, backoff=0.2, max_concurrency=2)
        context, questions = binary_prompt("meals?", LISTING[:2])
        before = rb.binary(context, questions[:1]).values
        errors: list[BaseException] = []

        def slow_call() -> None:
            try:
                rb.likelihood("Text:", [" Cats purr and purr and purr."], "\nQ: do cats purr?")
            except BaseException as exc:
                errors.append(exc)

        t = threading.Thread(target=slow_call)
        t.start()
        time.sleep(1.0)  # the echo request is in flight (it takes seconds on this server)
        srv.kill()
        t0 = time.perf_counter()
        t.join(timeout=60)
        assert not t.is_alive() and len(errors) == 1 and isinstance(errors[0], BackendError), errors
        assert time.perf_counter() - t0 < 10  # refused at once: a few quick retries, not a timeout
        assert rb.http.in_flight == 0
        srv.start()
        after = rb.binary(context, questions[:1]).values  # same instance: no partial state left behind
        assert after == pytest.approx(before, abs=0.02)
        rb.close()
    finally:
        srv.kill()


def test_one_server_per_model_a_list_is_refused_with_what_to_run() -> None:
    """llama-server's slots replace the pool of single-slot servers: a comma-separated list says so."""
    with pytest.raises(BackendError, match=r"one server URL per model.*--parallel N"):
        RemoteBackend("http://127.0.0.1:9,http://127.0.0.1:10")


def test_a_levels_questions_run_max_concurrency_at_once_on_one_server() -> None:
    """One server with slots: a level's questions are in flight together, never more than max_concurrency."""
    script = _Script()
    script.delay = 0.05
    with serving(_handler(script)) as url, RemoteBackend(url, max_concurrency=4) as rb:
        rb.probe()
        before = script.requests
        out = rb.binary("listing", [f"q{i}" for i in range(8)])  # one request group of a level
        assert len(out.values) == 8 and script.requests - before == 8
        assert 2 <= script.max_active <= 4
        assert rb.http.in_flight == 0
