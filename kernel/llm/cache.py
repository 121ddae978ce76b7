"""The LLM response cache: successful upstream responses keyed by sha256 of (model, messages, parameters).

Entries live in the kernel's store (its `llm_cache` table, via `cache_get`/`cache_put`): on PostgreSQL one
cache every node shares.
Only parameters that change the completion enter the key; transport flags (`stream`, `user`) do not.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import anyio.to_thread
import msgspec

# Request fields forwarded upstream (and keyed). Anything else a plugin sends is dropped.
FORWARDED_PARAMS: tuple[str, ...] = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "logit_bias",
)

_canonical = msgspec.json.Encoder(order="sorted")


class CacheBackend(Protocol):
    def cache_get(self, key: str) -> str | None: ...

    def cache_put(self, key: str, model: str, response: str) -> None: ...


def cache_key(model: str, messages: list[Any], params: dict[str, Any]) -> str:
    body = _canonical.encode({"model": model, "messages": messages, "params": params})
    return hashlib.sha256(body).hexdigest()


class ResponseCache:
    """Async wrapper over a CacheBackend (SQLite calls run in a worker thread)."""

    def __init__(self, backend: CacheBackend | None, enabled: bool = True):
        self.backend = backend
        self.enabled = enabled and backend is not None

    async def get(self, key: str) -> dict[str, Any] | None:
        if not self.enabled:
            return None
        raw = await anyio.to_thread.run_sync(self.backend.cache_get, key)  # type: ignore[union-attr]
        if raw is None:
            return None
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return None
        return value if isinstance(value, dict) else None

    async def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        if self.enabled:
            text = msgspec.json.encode(response).decode()
            await anyio.to_thread.run_sync(self.backend.cache_put, key, model, text)  # type: ignore[union-attr]
