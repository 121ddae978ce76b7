"""The kernel's LLM bridge: upstream client, role settings, cache, per-call tokens and the loopback endpoint."""

from ..budgets import CallBudget
from .bridge import BridgeOptions, LLMBridge, options_from_environ
from .errors import LLMError
from .events import LLMCallEvent
from .settings import ROLES, RoleSettings, RoleTable, role_for_call

__all__ = [
    "ROLES",
    "BridgeOptions",
    "CallBudget",
    "LLMBridge",
    "LLMCallEvent",
    "LLMError",
    "RoleSettings",
    "RoleTable",
    "options_from_environ",
    "role_for_call",
]
