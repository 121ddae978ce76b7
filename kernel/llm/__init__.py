"""The kernel's LLM bridge: upstream client, role settings, cache, per-call tokens and the loopback endpoint.

Names are imported on first use (PEP 562): with no LLM configured the kernel never loads the upstream
client (httpx) or the loopback endpoint; `configured(environ)` says whether one is.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .configured import configured

if TYPE_CHECKING:
    from ..budgets import CallBudget
    from .bridge import LLMBridge
    from .errors import LLMError
    from .events import LLMCallEvent
    from .options import BridgeOptions, options_from_environ
    from .settings import ROLES, RoleSettings, RoleTable, role_for_call

_HOMES = {
    "CallBudget": "..budgets",
    "BridgeOptions": ".options",
    "LLMBridge": ".bridge",
    "options_from_environ": ".options",
    "LLMError": ".errors",
    "LLMCallEvent": ".events",
    "ROLES": ".settings",
    "RoleSettings": ".settings",
    "RoleTable": ".settings",
    "role_for_call": ".settings",
}

__all__ = [
    "ROLES",
    "BridgeOptions",
    "CallBudget",
    "LLMBridge",
    "LLMCallEvent",
    "LLMError",
    "RoleSettings",
    "RoleTable",
    "configured",
    "options_from_environ",
    "role_for_call",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value
    return value
