"""The loopback OpenAI-compatible endpoint plugins call: `POST /v1/chat/completions`, `GET /v1/models`.

Served by uvicorn on 127.0.0.1 at an ephemeral port, inside the kernel's event loop, for as long as the
bridge runs — and on a Unix socket in a private folder (0700), the one a sandboxed LLM plugin's relay
forwards to (kernel/supervisor/llm_relay.py): such a plugin has no network of its own. Every request must carry `Authorization: Bearer <per-call token>`; unknown or expired tokens
get 401, calls past the budget 429 (`code: llm_budget_exhausted`), upstream failures 502/504, all with
an OpenAI-style error body. `stream: true` is answered as server-sent events (one content chunk, then
`[DONE]`) built from a non-stream upstream call, so budgets and the cache see whole calls only.
`Cache-Control: no-cache` (or `X-MRPVM-Cache: bypass`) skips the cache lookup for that call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import tempfile
import time
from typing import Any, Protocol

import msgspec
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .errors import LLM_BAD_REQUEST, LLM_TOKEN_INVALID, LLMError
from .tokens import TokenTable


class CompletionBackend(Protocol):
    """What the endpoint serves from (bridge.LLMBridge): token checks, completions, the model list."""

    tokens: TokenTable

    async def complete(
        self, token: str, body: dict[str, Any], *, use_cache: bool = True
    ) -> dict[str, Any]: ...

    async def available_models(
        self, *, refresh: bool = False, deadline: float | None = None
    ) -> list[str]: ...


STARTUP_TIMEOUT_S = 10.0


def _error(err: LLMError) -> JSONResponse:
    return JSONResponse(err.openai_body(), status_code=err.http_status)


def _token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise LLMError(LLM_TOKEN_INVALID, "missing `Authorization: Bearer <token>` header")
    return value.strip()


def _bypass(request: Request) -> bool:
    cache_control = request.headers.get("cache-control", "").lower()
    return (
        "no-cache" in cache_control
        or "no-store" in cache_control
        or (request.headers.get("x-mrpvm-cache", "").lower() == "bypass")
    )


def _sse(body: dict[str, Any]) -> StreamingResponse:
    """A whole completion as OpenAI chat.completion.chunk events."""
    choice = (body.get("choices") or [{}])[0]
    content = ((choice.get("message") or {}).get("content")) or ""
    base = {
        "id": body.get("id", "chatcmpl-mrpvm"),
        "object": "chat.completion.chunk",
        "created": body.get("created", int(time.time())),
        "model": body.get("model", ""),
    }
    chunks = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}
            ],
        },
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason") or "stop"}],
        },
    ]
    if body.get("usage"):
        chunks.append({**base, "choices": [], "usage": body["usage"]})

    async def events():
        for chunk in chunks:
            yield b"data: " + msgspec.json.encode(chunk) + b"\n\n"
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def build_app(bridge: CompletionBackend) -> Starlette:
    async def chat_completions(request: Request) -> Response:
        try:
            token = _token(request)
            bridge.tokens.check(token)  # 401 before reading a large body
            try:
                body = msgspec.json.decode(await request.body())
            except msgspec.DecodeError:
                raise LLMError(LLM_BAD_REQUEST, "the request body is not valid JSON") from None
            if not isinstance(body, dict):
                raise LLMError(LLM_BAD_REQUEST, "the request body must be a JSON object")
            result = await bridge.complete(token, body, use_cache=not _bypass(request))
        except LLMError as err:
            return _error(err)
        if body.get("stream"):
            return _sse(result)
        return JSONResponse(result)

    async def models(request: Request) -> Response:
        try:
            bridge.tokens.check(_token(request))
            names = await bridge.available_models()
        except LLMError as err:
            return _error(err)
        return JSONResponse(
            {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "upstream"} for n in names]}
        )

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
    return Starlette(routes=routes)


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves the kernel's signal handlers alone (Ctrl-C stays the CLI's)."""

    @contextlib.contextmanager
    def capture_signals(self):
        yield

    def install_signal_handlers(self) -> None:  # older uvicorn
        return None


class LoopbackEndpoint:
    """Runs the app on 127.0.0.1:<ephemeral> as a task of the current event loop."""

    def __init__(self, bridge: CompletionBackend, host: str = "127.0.0.1", port: int = 0):
        self.bridge = bridge
        self.host, self.requested_port = host, port
        self.port: int | None = None
        self._server: _QuietServer | None = None
        self._task: asyncio.Task | None = None
        self._socket: socket.socket | None = None
        self._unix: socket.socket | None = None
        self._unix_dir: str | None = None
        self.unix_path: str | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def _unix_socket(self) -> socket.socket:
        """A listening Unix socket in a fresh private folder (0700: only this user can reach it); under
        /tmp when $TMPDIR makes the path too long for a socket."""
        problem: OSError | None = None
        for base in (None, "/tmp"):
            folder = tempfile.mkdtemp(prefix="mrpvm-llm-", dir=base)
            path = os.path.join(folder, "llm.sock")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind(path)
            except OSError as err:
                sock.close()
                shutil.rmtree(folder, ignore_errors=True)
                problem = err
                continue
            sock.set_inheritable(False)
            self._unix_dir, self.unix_path = folder, path
            return sock
        assert problem is not None
        raise problem

    async def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.requested_port))
        sock.set_inheritable(False)  # plugin subprocesses must not hold the listening socket
        self._socket = sock
        self.port = sock.getsockname()[1]
        self._unix = self._unix_socket()
        config = uvicorn.Config(
            build_app(self.bridge),
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = _QuietServer(config)
        sockets = [sock, self._unix]
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=sockets))
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the startup error
                raise RuntimeError("the LLM loopback endpoint stopped during startup")
            if time.monotonic() > deadline:
                await self.aclose()
                raise RuntimeError("the LLM loopback endpoint did not start in time")
            await asyncio.sleep(0.005)

    async def aclose(self) -> None:
        server, task = self._server, self._task
        self._server = self._task = None
        if server is not None:
            server.should_exit = True
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5.0)
            except (TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        for listener in (self._socket, self._unix):
            if listener is not None:
                with contextlib.suppress(OSError):
                    listener.close()
        self._socket = self._unix = None
        if self._unix_dir is not None:
            shutil.rmtree(self._unix_dir, ignore_errors=True)
            self._unix_dir = self.unix_path = None
