"""The upstream client: OpenAI-compatible chat completions (`POST {base}/chat/completions`) and model list
(`GET {base}/models`) over httpx; works with Ollama, vLLM, llama.cpp server and OpenAI.

Transient failures — HTTP 429 and 5xx, timeouts, connection errors, a truncated or unparseable body — are
retried with exponential backoff (honouring `Retry-After`), bounded by `max_attempts` and by the call's
deadline. A 4xx other than 429, or valid JSON without a usable choice, fails at once. Every failure is an
`LLMError` with a stable code and `details["reachedUpstream"]`: False when no attempt got its request to
the upstream (connection refused, DNS failure, connect timeout, or no time for any attempt), so nothing
there can have run the model.
"""

from __future__ import annotations

import random
import time
from typing import Any

import anyio
import httpx
import msgspec

from .errors import (
    LLM_BAD_RESPONSE,
    LLM_CONNECTION_ERROR,
    LLM_RATE_LIMITED,
    LLM_TIMEOUT,
    LLM_UPSTREAM_ERROR,
    LLM_UPSTREAM_REJECTED,
    LLMError,
)

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_S = 0.25
DEFAULT_BACKOFF_MAX_S = 4.0
MIN_ATTEMPT_S = 0.05  # no attempt starts with less time than this left
ERROR_TEXT = 300
# Transport failures that happen before the request is on the wire: the upstream never saw it.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)


class UpstreamConfig(msgspec.Struct, kw_only=True, frozen=True):
    base_url: str
    api_key: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S  # per attempt
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_s: float = DEFAULT_BACKOFF_S
    backoff_max_s: float = DEFAULT_BACKOFF_MAX_S


class Completion(msgspec.Struct, kw_only=True):
    """A validated upstream answer: the raw response body and what the bridge needs from it."""

    body: dict[str, Any]
    content: str
    prompt_tokens: int | None
    completion_tokens: int | None
    attempts: int


class _Transient(Exception):
    def __init__(
        self,
        code: str,
        message: str,
        retry_after: float | None = None,
        status: int | None = None,
        *,
        reached: bool = True,
    ):
        super().__init__(message)
        self.code, self.message, self.retry_after, self.status = code, message, retry_after, status
        self.reached = reached  # the request got to the upstream (it may have run the model)


def _snippet(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return text[:ERROR_TEXT] + ("…" if len(text) > ERROR_TEXT else "")


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


def _usage(body: dict[str, Any], name: str) -> int | None:
    usage = body.get("usage")
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else None


def validate_completion(body: Any) -> str:
    """The first choice's message content, or LLM_BAD_RESPONSE."""
    if not isinstance(body, dict):
        raise LLMError(
            LLM_BAD_RESPONSE, f"upstream answered JSON that is not an object: {_snippet(str(body))}"
        )
    if isinstance(body.get("error"), dict):
        message = body["error"].get("message") or "error"
        raise LLMError(LLM_BAD_RESPONSE, f"upstream answered an error object: {_snippet(str(message))}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise LLMError(LLM_BAD_RESPONSE, "upstream response has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if content is None and isinstance(first, dict) and isinstance(first.get("text"), str):
        content = first["text"]  # completions-style servers
    if not isinstance(content, str):
        raise LLMError(LLM_BAD_RESPONSE, "upstream response's first choice has no message content")
    return content


class UpstreamClient:
    """One httpx.AsyncClient to the upstream; safe to share across concurrent calls."""

    def __init__(self, config: UpstreamConfig, *, transport: httpx.AsyncBaseTransport | None = None):
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        headers = {"Accept": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s),
            transport=transport,
            trust_env=False,  # never route the kernel's LLM traffic through an ambient proxy
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------------ public calls

    async def chat(self, body: dict[str, Any], *, deadline: float | None = None) -> Completion:
        """POST /chat/completions (non-stream) with retries; a validated Completion or LLMError."""
        payload = {**body, "stream": False}
        attempts = 0

        async def once(timeout: float) -> Completion:
            nonlocal attempts
            attempts += 1
            response = await self._send("POST", "/chat/completions", payload, timeout)
            data = self._json(response)
            content = validate_completion(data)
            return Completion(
                body=data,
                content=content,
                prompt_tokens=_usage(data, "prompt_tokens"),
                completion_tokens=_usage(data, "completion_tokens"),
                attempts=attempts,
            )

        try:
            return await self._with_retries(once, deadline)
        except LLMError as err:
            err.details.setdefault("attempts", attempts)
            raise

    async def models(self, *, deadline: float | None = None) -> list[str]:
        """GET /models: the upstream's model ids (OpenAI `data[].id`, Ollama-style `models[].name`)."""

        async def once(timeout: float) -> list[str]:
            data = self._json(await self._send("GET", "/models", None, timeout))
            items = data.get("data") if isinstance(data, dict) else None
            if items is None and isinstance(data, dict):
                items = data.get("models")
            if not isinstance(items, list):
                raise LLMError(LLM_BAD_RESPONSE, "upstream /models answered without a model list")
            out = []
            for item in items:
                if isinstance(item, dict):
                    name = item.get("id") or item.get("name") or item.get("model")
                    if isinstance(name, str) and name:
                        out.append(name)
                elif isinstance(item, str):
                    out.append(item)
            return out

        return await self._with_retries(once, deadline)

    # ------------------------------------------------------------------ plumbing

    async def _send(self, method: str, path: str, payload: Any, timeout: float) -> httpx.Response:
        url = self.base_url + path
        try:
            if payload is None:
                response = await self._http.request(method, url, timeout=timeout)
            else:
                response = await self._http.request(
                    method,
                    url,
                    content=msgspec.json.encode(payload),
                    timeout=timeout,
                    headers={"Content-Type": "application/json"},
                )
        except httpx.TimeoutException as err:
            raise _Transient(
                LLM_TIMEOUT,
                f"upstream {path} timed out after {timeout:.1f} s ({type(err).__name__}; "
                "MRPVM_LLM_TIMEOUT_MS gives a slow model more time)",
                reached=not isinstance(err, _NOT_SENT),
            ) from None
        except httpx.RemoteProtocolError as err:
            raise _Transient(
                LLM_BAD_RESPONSE, f"upstream {path} broke the connection mid-response: {err}"
            ) from None
        except httpx.TransportError as err:
            raise _Transient(
                LLM_CONNECTION_ERROR,
                f"cannot reach the upstream at {self.base_url}: {err or type(err).__name__}",
                reached=not isinstance(err, _NOT_SENT),
            ) from None
        status = response.status_code
        if status == 429:
            raise _Transient(
                LLM_RATE_LIMITED,
                f"upstream rate limit (429): {_snippet(response.content)}",
                _retry_after(response),
                429,
            )
        if status >= 500:
            raise _Transient(
                LLM_UPSTREAM_ERROR,
                f"upstream error {status}: {_snippet(response.content)}",
                _retry_after(response),
                status,
            )
        if status >= 400:
            raise LLMError(
                LLM_UPSTREAM_REJECTED,
                f"upstream refused the request ({status}): {_snippet(response.content)}",
                {"status": status},
            )
        return response

    @staticmethod
    def _json(response: httpx.Response) -> Any:
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            raise _Transient(
                LLM_BAD_RESPONSE, f"upstream answered non-JSON: {_snippet(response.content)}"
            ) from None

    async def _with_retries(self, once, deadline: float | None):
        cfg = self.config
        attempt = 0
        last: _Transient | None = None
        reached = False  # some attempt got its request to the upstream
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left < MIN_ATTEMPT_S:
                break
            attempt += 1
            timeout = cfg.timeout_s if left is None else min(cfg.timeout_s, left)
            try:
                return await once(timeout)
            except _Transient as err:
                last = err
                reached = reached or err.reached
            except LLMError as err:  # the upstream answered (4xx, unusable JSON): it saw the request
                err.details.setdefault("reachedUpstream", True)
                raise
            if attempt >= cfg.max_attempts:
                break
            delay = min(cfg.backoff_max_s, cfg.backoff_s * (2 ** (attempt - 1)))
            if last.retry_after is not None:
                delay = min(cfg.backoff_max_s, max(delay, last.retry_after))
            delay *= 1.0 + 0.1 * random.random()
            if deadline is not None and time.monotonic() + delay + MIN_ATTEMPT_S > deadline:
                break
            await anyio.sleep(delay)
        if last is None:
            raise LLMError(
                LLM_TIMEOUT,
                "the call's deadline left no time to reach the upstream",
                {"attempts": 0, "reachedUpstream": False},
            )
        details: dict[str, Any] = {"attempts": attempt, "reachedUpstream": reached}
        if last.status is not None:
            details["status"] = last.status
        raise LLMError(
            last.code, f"{last.message} (after {attempt} attempt{'s' if attempt != 1 else ''})", details
        )
