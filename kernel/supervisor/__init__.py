"""Plugin supervision: every plugin a subprocess, warm (framed worker pool) or one-shot (protocol/SPEC.md §1–3).

async with Supervisor(registry, limits) as sup:
    result = await sup.call("kb-fast", request, timeout_s=2.0)   # CallResult or PluginCallError
"""

from .core import DEFAULT_LIMITS, Supervisor
from .errors import (
    CRASHED,
    INPUT_TOO_LARGE,
    INTERNAL_ERROR,
    INVALID_CNL,
    OUTPUT_TOO_LARGE,
    PLUGIN_ERROR,
    PLUGIN_INVALID_INPUT,
    PLUGIN_UNAVAILABLE,
    PROTOCOL_ERROR,
    SANDBOX_LIMIT,
    SHUTDOWN,
    SPAWN_FAILED,
    TIMEOUT,
    UNKNOWN_PLUGIN,
    CallError,
    CallResult,
    PluginCallError,
    RawReply,
)
from .process import scrubbed_env

__all__ = [
    "CRASHED",
    "DEFAULT_LIMITS",
    "INPUT_TOO_LARGE",
    "INTERNAL_ERROR",
    "INVALID_CNL",
    "OUTPUT_TOO_LARGE",
    "PLUGIN_ERROR",
    "PLUGIN_INVALID_INPUT",
    "PLUGIN_UNAVAILABLE",
    "PROTOCOL_ERROR",
    "SANDBOX_LIMIT",
    "SHUTDOWN",
    "SPAWN_FAILED",
    "TIMEOUT",
    "UNKNOWN_PLUGIN",
    "CallError",
    "CallResult",
    "PluginCallError",
    "RawReply",
    "Supervisor",
    "scrubbed_env",
]
