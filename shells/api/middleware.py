"""One pure-ASGI guard in front of every route: request id, Host/Origin, bearer token, body size and
pace, last-resort errors.

Pure ASGI (not BaseHTTPMiddleware) so streaming responses and client disconnects pass through untouched.
- every request gets `scope["state"]["request_id"]` (echoed as `X-Request-Id`, used in error bodies);
- the Host, Origin, content-type and CORS rules of origin.py (before the token: a preflight carries none);
- with a token configured, every path but OPEN_PATHS (and those under `open_prefixes`: the web app's
  static files) needs `Authorization: Bearer <token>` (401 otherwise);
- a URL holding a NUL byte is 400 (no route, file or name may contain one);
- a body larger than the limit is refused: at once when Content-Length says so, else when the streamed
  bytes pass it (the endpoint's read raises BodyTooLarge → 413); at most DRAIN_CAP of it is read;
- a body that stalls (no bytes for `body_timeout_s` before it is complete) is `408 REQUEST_TIMEOUT`;
- an exception nothing else handled is logged and answered `500 INTERNAL_ERROR` JSON if no response
  has started.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import ApiError, BodyTooLarge, describe, error_bytes
from .origin import OriginPolicy, Refusal

OPEN_PATHS = frozenset({"/health"})  # liveness probes work without the token (default)
# An oversized body is read and dropped up to this much before the 413 goes out, so a client still
# uploading a little too much sees the answer instead of a reset connection; past it (and at once for a
# client that sent `Expect: 100-continue`) the connection just closes: a 100 MB body is not read.
DRAIN_CAP = 4 << 20
BODY_TIMEOUT_S = 30.0


class Guard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_body_bytes: int,
        open_paths: frozenset[str] = OPEN_PATHS,
        open_prefixes: tuple[str, ...] = (),
        policy: OriginPolicy | None = None,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ):
        self.app = app
        self.token = token or None
        self.max_body = max_body_bytes
        self.open_paths = open_paths
        self.open_prefixes = open_prefixes
        self.policy = policy or OriginPolicy()
        self.body_timeout_s = body_timeout_s

    def _open(self, path: str) -> bool:
        return path in self.open_paths or (bool(self.open_prefixes) and path.startswith(self.open_prefixes))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = "http_" + secrets.token_hex(8)
        scope.setdefault("state", {})["request_id"] = request_id
        started = False
        cors = self.policy.cors_headers(self.policy.allowed_origin(scope))

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers + cors}
            await send(message)

        if self.policy.is_preflight(scope):
            answer = self.policy.preflight(scope)
            if isinstance(answer, Refusal):
                await self._refuse(scope, receive, send_wrapper, answer)
            else:
                cors = []  # the preflight's headers already carry them
                await send_wrapper({"type": "http.response.start", "status": answer[0], "headers": answer[1]})
                await send_wrapper({"type": "http.response.body", "body": b""})
            return
        refused = self.policy.refusal(scope)
        if refused is not None:
            await self._refuse(scope, receive, send_wrapper, refused)
            return
        if self.token and not self._open(scope["path"]) and not self._authorized(scope):
            await _send_error(scope, send_wrapper, 401, "UNAUTHORIZED", "missing or wrong bearer token")
            return
        if "\x00" in scope["path"] or b"%00" in scope.get("query_string", b""):
            await _send_error(scope, send_wrapper, 400, "BAD_REQUEST", "the URL holds a NUL byte (%00)")
            return
        length = _content_length(scope)
        if length is not None and length > self.max_body:
            if not _expects_continue(scope):  # else the client waits for our answer before sending
                await _drain(receive, min(length, DRAIN_CAP))
            await _send_error(scope, send_wrapper, 413, "BODY_TOO_LARGE", *_too_large(self.max_body, length))
            return
        received = 0
        body_done = False

        async def counting_receive() -> Message:
            nonlocal received, body_done
            if body_done:  # after the body: a wait for the disconnect (a stream), not bounded
                return await receive()
            try:
                # asyncio's own timeout (uvicorn serves on asyncio): a fraction of an anyio cancel
                # scope's cost, paid on every request
                async with asyncio.timeout(self.body_timeout_s):
                    message = await receive()
            except TimeoutError:
                raise ApiError(
                    408,
                    "REQUEST_TIMEOUT",
                    f"the request body stalled: no bytes for {self.body_timeout_s:g} s",
                    {"bodyTimeoutS": self.body_timeout_s, "receivedBytes": received},
                ) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    if message.get("more_body", False):
                        await _drain(receive, DRAIN_CAP)
                    raise BodyTooLarge(self.max_body)
            return message

        try:
            await self.app(scope, counting_receive, send_wrapper)
        except Exception as exc:  # noqa: BLE001 - the last resort: log it, answer JSON
            status, code, message, details, session_id = describe(exc)
            if started:
                raise
            await _send_error(scope, send_wrapper, status, code, message, details, session_id)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
        """Answer a refusal of the origin policy, after reading (and dropping) a body up to the size limit,
        so the client sees the answer; the connection then closes."""
        if refusal.status != 421:  # a foreign Host gets nothing read
            with anyio.move_on_after(self.body_timeout_s):
                await _drain(receive, self.max_body)
        await _send_error(
            scope, send, refusal.status, refusal.code, refusal.message, refusal.details, close=True
        )

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, given = value.decode("latin-1").partition(" ")
                return (
                    self.token is not None
                    and scheme.lower() == "bearer"
                    and hmac.compare_digest(given.strip().encode(), self.token.encode())
                )
        return False


def _expects_continue(scope: Scope) -> bool:
    return any(n == b"expect" and v.lower() == b"100-continue" for n, v in scope.get("headers", []))


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _drain(receive: Receive, cap: int) -> None:
    seen = 0
    while seen < cap:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _too_large(limit: int, size: int) -> tuple[str, dict[str, int]]:
    err = BodyTooLarge(limit, size)
    return err.message, err.details


async def _send_error(
    scope: Scope,
    send: Send,
    status: int,
    code: str,
    message: str,
    details: dict | None = None,
    session_id: str | None = None,
    *,
    close: bool = False,
) -> None:
    body = error_bytes(scope, status, code, message, details, session_id)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if status == 413 or close:
        headers.append((b"connection", b"close"))  # the rest of the body is not read
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
