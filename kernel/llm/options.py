"""The LLM bridge's options (kernel/llm/bridge.py), read from the MRPVM_LLM_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping

import msgspec

from .client import (
    DEFAULT_BACKOFF_S,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_TIMEOUT_S,
    UpstreamConfig,
)
from .configured import BASE_URL_VAR

_OFF = {"0", "off", "false", "no"}


class BridgeOptions(msgspec.Struct, kw_only=True, frozen=True):
    upstream: UpstreamConfig | None = None
    cache: bool = True
    host: str = "127.0.0.1"
    port: int = 0  # 0: an ephemeral port
    context_tokens: int = 0  # the upstream model's context window (MRPVM_LLM_CONTEXT_TOKENS); 0: unknown


def options_from_environ(environ: Mapping[str, str] | None = None) -> BridgeOptions:
    """MRPVM_LLM_BASE_URL, _API_KEY, _TIMEOUT_MS (per attempt), _MAX_ATTEMPTS, _BACKOFF_MS, _CACHE (on/off),
    _CONTEXT_TOKENS (the model's context window, told to plugins so their prompts fit it)."""
    env = os.environ if environ is None else environ
    base = (env.get(BASE_URL_VAR) or "").strip()
    upstream = None
    if base:
        upstream = UpstreamConfig(
            base_url=base,
            api_key=(env.get("MRPVM_LLM_API_KEY") or "").strip(),
            timeout_s=_number(env, "MRPVM_LLM_TIMEOUT_MS", DEFAULT_TIMEOUT_S * 1000) / 1000.0,
            max_attempts=int(_number(env, "MRPVM_LLM_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS)),
            backoff_s=_number(env, "MRPVM_LLM_BACKOFF_MS", DEFAULT_BACKOFF_S * 1000) / 1000.0,
        )
    cache = (env.get("MRPVM_LLM_CACHE") or "on").strip().lower() not in _OFF
    context = int(_number(env, "MRPVM_LLM_CONTEXT_TOKENS", 0.0)) if env.get("MRPVM_LLM_CONTEXT_TOKENS") else 0
    return BridgeOptions(upstream=upstream, cache=cache, context_tokens=context)


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        from ..errors import ConfigError

        raise ConfigError(f"{name}={raw!r} is not a number") from None
    if value <= 0:
        from ..errors import ConfigError

        raise ConfigError(f"{name} must be positive (got {raw})")
    return value
