"""A scripted OpenAI-compatible server for tests: real HTTP on 127.0.0.1, the real wire format.

    with ScriptedLLM() as llm:                      # llm.base_url == "http://127.0.0.1:PORT/v1"
        llm.push(status(500), reply("## Intent Group 1\\n..."))
        ...
        assert llm.count == 2                       # chat requests received
        llm.bodies[-1]["model"]

Each POST /v1/chat/completions takes the next action from the queue; when the queue is empty the
`responder(body)` callable decides, and without one the server answers 500 "script exhausted" (so a
test notices an unexpected call). GET /v1/models lists `models`. Actions: `reply` (valid completion,
streamed as SSE when the request asks `stream: true`), `status` (an HTTP error, optional Retry-After),
`sleep` (hold the request, then do another action — past the client's timeout it is a timeout),
`garbage` (200 with a body that is not JSON), `no_choices` (valid JSON without choices), `truncated`
(Content-Length larger than the body, then close; a streamed request gets a stream cut before [DONE]).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Action:
    kind: str
    content: str = ""
    status: int = 200
    seconds: float = 0.0
    then: Action | None = None
    retry_after: float | None = None
    finish_reason: str | None = "stop"
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 11, "completion_tokens": 7})


def reply(
    content: str, prompt_tokens: int = 11, completion_tokens: int = 7, finish_reason: str | None = "stop"
) -> Action:
    """A valid completion; `finish_reason="length"` says the model was cut at max_tokens."""
    return Action(
        "reply",
        content=content,
        finish_reason=finish_reason,
        usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    )


def status(code: int, retry_after: float | None = None) -> Action:
    return Action("status", status=code, retry_after=retry_after)


def sleep(seconds: float, then: Action | None = None) -> Action:
    return Action("sleep", seconds=seconds, then=then or reply("late answer"))


def garbage() -> Action:
    return Action("garbage")


def no_choices() -> Action:
    return Action("no_choices")


def truncated() -> Action:
    return Action("truncated")


Responder = Callable[[dict[str, Any]], Action]


class ScriptedLLM:
    def __init__(self, models: list[str] | None = None):
        self.models = list(models or ["test-model-a", "test-model-b"])
        self.queue: deque[Action] = deque()
        self.responder: Responder | None = None
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.model_requests = 0
        self.models_gate: threading.Event | None = None  # when set: GET /models waits for it
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # ------------------------------------------------------------------ control

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.bodies)

    def push(self, *actions: Action) -> ScriptedLLM:
        with self._lock:
            self.queue.extend(actions)
        return self

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> Action:
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Action("status", status=500, content="script exhausted")

    # ------------------------------------------------------------------ HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def _send(
                self,
                code: int,
                body: bytes,
                content_type: str = "application/json",
                extra: dict | None = None,
            ):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    self._send(404, b'{"error":{"message":"not found"}}')
                    return
                with server._lock:
                    server.model_requests += 1
                if server.models_gate is not None:
                    server.models_gate.wait(30)
                data = {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]}
                self._send(200, json.dumps(data).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error":{"message":"not found"}}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error":{"message":"bad json"}}')
                    return
                with server._lock:
                    server.bodies.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    self._act(server._next(body), body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

            def _act(self, action: Action, body: dict[str, Any]) -> None:
                stream = bool(body.get("stream"))
                if action.kind == "sleep":
                    server._stop.wait(action.seconds)
                    if server._stop.is_set():
                        return
                    self._act(action.then or reply("late answer"), body)
                elif action.kind == "reply":
                    if stream:
                        self._stream(action, body, complete=True)
                    else:
                        self._send(200, json.dumps(_completion(action, body)).encode())
                elif action.kind == "status":
                    extra = {"Retry-After": str(action.retry_after)} if action.retry_after is not None else {}
                    message = action.content or f"scripted error {action.status}"
                    payload = {"error": {"message": message, "type": "server_error", "code": None}}
                    self._send(action.status, json.dumps(payload).encode(), extra=extra)
                elif action.kind == "garbage":
                    self._send(200, b"<html>502 Bad Gateway</html> {not json")
                elif action.kind == "no_choices":
                    self._send(
                        200, json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode()
                    )
                elif action.kind == "truncated":
                    if stream:
                        self._stream(action, body, complete=False)
                        return
                    full = json.dumps(_completion(reply("this answer is cut"), body)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(full)))
                    self.end_headers()
                    self.wfile.write(full[: len(full) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                else:
                    raise ValueError(f"unknown action {action.kind}")

            def _stream(self, action: Action, body: dict[str, Any], complete: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                base = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "model": body.get("model", ""),
                }
                text = action.content or "partial"
                events = [
                    {**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
                ]
                if complete:
                    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                for event in events:
                    self._chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
                if complete:
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                else:
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler


def _completion(action: Action, body: dict[str, Any]) -> dict[str, Any]:
    usage = dict(action.usage)
    usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return {
        "id": f"chatcmpl-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": action.content},
                "finish_reason": action.finish_reason,
            }
        ],
        "usage": usage,
    }
