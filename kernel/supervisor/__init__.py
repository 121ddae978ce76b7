"""Plugin supervision: every plugin a subprocess, warm (framed worker pool) or one-shot (protocol/SPEC.md §1–3).

async with Supervisor(registry, limits) as sup:
    result = await sup.call("kb-fast", request, timeout_s=2.0)   # CallResult or PluginCallError
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not loaded before a one-turn ask has launched its workers (early_launch.py)
if TYPE_CHECKING:
    from typing import Any

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

# The names load their module on first use, so `from mrpvm.kernel.supervisor.early_launch import …` (a
# one-turn `mrpvm ask` before the kernel's imports) does not load the supervisor and asyncio.
_HOMES = {
    **dict.fromkeys(("DEFAULT_LIMITS", "Supervisor"), "core"),
    "scrubbed_env": "process",
}

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


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES.get(name, 'errors')}"), name)
    globals()[name] = value
    return value
