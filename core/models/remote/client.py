"""HTTP to one model server: one URL, keep-alive connections, retries and timeouts.

llama.cpp's ``llama-server --parallel N`` works on N requests at once (slots, continuous batching), so Shelfwise
sends each model's requests to one server and lets it schedule them: there is no pool of servers and no dispatch
here any more (docs/scale.md says why the earlier pool of single-slot servers is gone). What the server cannot do
for its clients is what remains:

* **one URL per model**: ``http://host:port`` (a trailing ``/v1`` is accepted); a comma-separated list is refused
  with a message (run one ``llama-server --parallel N`` instead of N single-slot servers);
* **requests in flight**: at most ``connections`` at once from one :class:`ServerClient` (httpx's connection pool:
  a request waits for a free keep-alive connection), so a client asks for no more than the server has slots;
* **timeouts**: ``timeout`` seconds on connect, on every read and on every write;
* **retries**: connection errors and 5xx answers are retried ``retries`` times with exponential backoff. A timeout
  is **not** retried (the server may still be working on the request; sending it again would only queue more
  work): the call fails after ``timeout`` seconds. A 4xx answer is not retried either.

Every failure is a :class:`~shelfwise.core.models.backend.BackendError` that names the server and carries the
server's own message (:class:`ServerUnavailable` when another copy of the model may stand in). Streaming
(``stream=True`` completions) reads server-sent events with ``httpx-sse``.
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


def server_url(url: str) -> str:
    """``scheme://host:port[/path]`` of one server (a trailing ``/`` or ``/v1`` dropped); a list is refused."""
    if "," in url:
        raise BackendError(
            f"one server URL per model, not a list ({url!r}): start one llama-server with --parallel N slots "
            "instead of several single-slot servers (docs/scale.md)"
        )
    raw = url.strip().rstrip("/").removesuffix("/v1")
    parts = urllib.parse.urlsplit(raw if "://" in raw else "http://" + raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendError(f"not an http(s) server URL: {url!r}")
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


class ServerClient:
    """One model server, with the connection, retry and timeout policy above. Thread-safe."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float,
        retries: int,
        connections: int,
        backoff: float,
        role: str = "decision server",
        start_hint: str = "llama-server -m MODEL.gguf --parallel 4 --port PORT (docs/server.md)",
    ) -> None:
        if not url or not url.strip():
            raise BackendError("no server URL given")
        self.url = server_url(url)
        self.role = role  # what the messages call the server
        self.start_hint = start_hint
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.connections = max(1, int(connections))
        self.backoff = backoff
        self.in_flight = 0  # requests sent and not yet answered (the tests check that none is left behind)
        self._count = threading.Lock()
        self.client = httpx.Client(
            base_url=self.url,
            timeout=httpx.Timeout(timeout, pool=None),  # waiting for a free connection is not the server's time
            limits=httpx.Limits(max_connections=self.connections, max_keepalive_connections=self.connections),
            trust_env=False,  # loopback and LAN servers: no proxy from the environment
        )

    def close(self) -> None:
        self.client.close()

    @contextlib.contextmanager
    def _counted(self) -> Iterator[None]:
        with self._count:
            self.in_flight += 1
        try:
            yield
        finally:
            with self._count:
                self.in_flight -= 1

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
        retries: int | None = None,
    ) -> JSONObject:
        """One JSON request, retried as the module doc says; the decoded JSON answer."""
        attempts = 1 + (self.retries if retries is None else max(0, retries))
        last, down, url = "", False, self.url
        for attempt in range(attempts):
            with self._counted():
                try:
                    resp = self.client.request(method, path, json=payload)
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
        to ``data: [DONE]``. Holds one connection while open. Connection errors and 5xx are retried before the stream
        starts, never after; leaving the ``with`` block early closes the connection, which stops the server."""
        with self._counted():
            resp = self._open_stream(path, payload)
            try:
                yield _events(EventSource(resp), self.url, self.timeout)
            finally:
                resp.close()

    def _open_stream(self, path: str, payload: JSONObject) -> httpx.Response:
        last, down = "", False
        for attempt in range(1 + self.retries):
            request = self.client.build_request("POST", path, json=payload, headers={"Accept": "text/event-stream"})
            try:
                resp = self.client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                raise BackendError(f"the {self.role} at {self.url} did not answer within {self.timeout:g} s") from exc
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
                        f"the {self.role} at {self.url} refused generation: HTTP {resp.status_code}: {detail}"
                    )
                last, down = f"HTTP {resp.status_code}: {detail}", False
            if attempt < self.retries:
                self._backoff(attempt)
        raise self._unreachable(self.url, last, 1 + self.retries, down)


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
