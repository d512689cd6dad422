"""HTTP for the remote backend: a pool of OpenAI-compatible servers over httpx.

Each server is an :class:`Endpoint` with its own ``httpx.Client`` (keep-alive connections, at most
``slots_per_server`` of them; ``timeout`` on connect, on every read and on every write). A :class:`ServerPool`
bounds the requests in flight over all servers (``max_concurrency``, a semaphore shared by every thread, so nested
fan-out cannot exceed it) and sends each request to the server with a free slot and the fewest requests in flight,
so the questions of a level spread over the pool and a slow server does not hold the others up.

Retries: connection errors and 5xx answers are retried ``retries`` times with exponential backoff (a retry may go to
another server of the pool). A timeout is **not** retried (the server may still be working on the request; sending
it again would only queue more work): the call fails after ``timeout`` seconds. A 4xx answer is not retried either.
Every failure is a :class:`~shelfwise.core.models.backend.BackendError` that names the server and carries the
server's own message. Streaming (``stream=True`` completions) reads server-sent events with ``httpx-sse``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator

import httpx
from httpx_sse import EventSource

from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import BackendError

RETRY_STATUS = frozenset({500, 502, 503, 504})
# transport errors after which the server is probably not running (the message then says how to start one)
_DOWN = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError)


class ServerUnavailable(BackendError):
    """The server could not be reached, did not answer in time, or kept failing (5xx): another copy of the model
    may stand in. A refusal (4xx: the request itself is wrong) is a plain :class:`BackendError`."""


class Endpoint:
    """One server: its base URL, an httpx client with keep-alive connections, and its requests in flight."""

    def __init__(self, url: str, timeout: float, connections: int) -> None:
        raw = url.strip().rstrip("/").removesuffix("/v1")
        parts = urllib.parse.urlsplit(raw if "://" in raw else "http://" + raw)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BackendError(f"not an http(s) server URL: {url!r}")
        self.url = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self.in_flight = 0
        self.client = httpx.Client(
            base_url=self.url,
            timeout=httpx.Timeout(timeout, pool=None),  # the pool's own slots bound waiting for a connection
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
            trust_env=False,  # loopback and LAN servers: no proxy from the environment
        )

    def close(self) -> None:
        self.client.close()


class ServerPool:
    """The servers of one remote backend, with the dispatch, retry and timeout policy above. Thread-safe."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float,
        retries: int,
        max_concurrency: int,
        slots_per_server: int | None,
        backoff: float,
        role: str = "decision server",
        start_hint: str = "python -m llama_cpp.server --model MODEL.gguf --port PORT",
    ) -> None:
        urls = [u for u in url.split(",") if u.strip()]
        self.role = role  # what the messages call the server
        self.start_hint = start_hint
        if not urls:
            raise BackendError("no server URL given")
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.max_concurrency = max(1, int(max_concurrency))
        self.slots_per_server = max(1, int(slots_per_server or self.max_concurrency))
        self.backoff = backoff
        self.endpoints = [Endpoint(u, self.timeout, self.slots_per_server) for u in urls]
        self.url = ",".join(e.url for e in self.endpoints)
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._pick = threading.Condition()
        self._rr = 0

    def close(self) -> None:
        for e in self.endpoints:
            e.close()

    # ------------------------------------------------------------------ dispatch

    @contextlib.contextmanager
    def slot(self, ep: Endpoint | None = None) -> Iterator[Endpoint]:
        """A slot on ``ep``, or on the least busy server with a free slot; waits while every slot is taken."""
        with self._slots:
            with self._pick:
                while True:
                    self._rr += 1
                    n = len(self.endpoints)
                    order = [ep] if ep is not None else [self.endpoints[(self._rr + i) % n] for i in range(n)]
                    free = [e for e in order if e.in_flight < self.slots_per_server]
                    if free:
                        chosen = min(free, key=lambda e: e.in_flight)
                        chosen.in_flight += 1
                        break
                    self._pick.wait()
            try:
                yield chosen
            finally:
                with self._pick:
                    chosen.in_flight -= 1
                    self._pick.notify_all()

    def _backoff(self, attempt: int) -> None:
        time.sleep(self.backoff * 2**attempt)

    def _unreachable(self, url: str, last: str, attempts: int, down: bool) -> BackendError:
        hint = f" Is it running? e.g. {self.start_hint}." if down else ""
        return ServerUnavailable(f"cannot reach the {self.role} at {url} ({last}; {attempts} attempts).{hint}")

    # ------------------------------------------------------------------ requests

    def request(
        self,
        method: str,
        path: str,
        payload: JSONObject | None = None,
        *,
        ep: Endpoint | None = None,
        retries: int | None = None,
    ) -> JSONObject:
        """One JSON request, retried as the module doc says; the decoded JSON answer."""
        attempts = 1 + (self.retries if retries is None else max(0, retries))
        last, down, url = "", False, (ep or self.endpoints[0]).url
        for attempt in range(attempts):
            with self.slot(ep) as target:  # an unpinned retry may go to another server of the pool
                url = target.url
                try:
                    resp = target.client.request(method, path, json=payload)
                except httpx.TimeoutException as exc:
                    raise ServerUnavailable(
                        f"the {self.role} at {url} did not answer {path} within {self.timeout:g} s"
                    ) from exc
                except httpx.TransportError as exc:
                    last, down = _describe(exc), isinstance(exc, _DOWN)
                    resp = None
            if resp is not None:
                if resp.status_code not in RETRY_STATUS:
                    if resp.status_code >= 400:
                        raise BackendError(
                            f"the {self.role} at {url} refused {path}: HTTP {resp.status_code}: "
                            f"{error_detail(resp.content)}"
                        )
                    try:
                        data = resp.json()
                    except ValueError as exc:
                        raise BackendError(f"the {self.role} at {url} sent invalid JSON for {path}") from exc
                    if not isinstance(data, dict):
                        raise BackendError(f"the {self.role} at {url} sent {type(data).__name__} for {path}")
                    return data
                last, down = f"HTTP {resp.status_code}: {error_detail(resp.content)}", False
            if attempt + 1 < attempts:
                self._backoff(attempt)
        raise self._unreachable(url, last, attempts, down)

    @contextlib.contextmanager
    def stream_events(self, path: str, payload: JSONObject) -> Iterator[Iterator[JSONObject]]:
        """POST ``payload`` and read the answer as server-sent events: the JSON object of each ``data:`` line up
        to ``data: [DONE]``. Holds one slot while open. Connection errors and 5xx are retried before the stream
        starts, never after; leaving the ``with`` block early closes the connection, which stops the server."""
        with self.slot() as ep:
            resp = self._open_stream(ep, path, payload)
            try:
                yield _events(EventSource(resp), ep.url, self.timeout)
            finally:
                resp.close()

    def _open_stream(self, ep: Endpoint, path: str, payload: JSONObject) -> httpx.Response:
        last, down = "", False
        for attempt in range(1 + self.retries):
            request = ep.client.build_request("POST", path, json=payload, headers={"Accept": "text/event-stream"})
            try:
                resp = ep.client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                raise BackendError(f"the {self.role} at {ep.url} did not answer within {self.timeout:g} s") from exc
            except httpx.TransportError as exc:
                last, down = _describe(exc), isinstance(exc, _DOWN)
            else:
                if resp.status_code == 200:
                    return resp
                try:
                    detail = error_detail(resp.read())
                except httpx.HTTPError:
                    detail = "(no body)"
                finally:
                    resp.close()
                if resp.status_code not in RETRY_STATUS:
                    raise BackendError(
                        f"the {self.role} at {ep.url} refused generation: HTTP {resp.status_code}: {detail}"
                    )
                last, down = f"HTTP {resp.status_code}: {detail}", False
            if attempt < self.retries:
                self._backoff(attempt)
        raise self._unreachable(ep.url, last, 1 + self.retries, down)


def _events(source: EventSource, url: str, timeout: float) -> Iterator[JSONObject]:
    try:
        for sse in source.iter_sse():
            if sse.data == "[DONE]":
                return
            try:
                event = json.loads(sse.data)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("error"):
                raise BackendError(
                    f"the decision server at {url} failed while streaming: {error_detail(sse.data.encode())}"
                )
            if isinstance(event, dict):
                yield event
    except httpx.TimeoutException as exc:
        raise BackendError(f"the decision server at {url} stopped streaming for {timeout:g} s") from exc
    except httpx.TransportError as exc:
        raise BackendError(f"the decision server at {url} broke off the stream: {_describe(exc)}") from exc


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def error_detail(data: bytes) -> str:
    """The server's error message (OpenAI ``{"error": {"message": ...}}``, FastAPI ``{"detail": ...}``) or
    text."""
    text = data.decode("utf-8", errors="replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:300] or "(no body)"
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if err:
            return str(err)[:300]
        if obj.get("detail"):
            return str(obj["detail"])[:300]
    return text[:300]
