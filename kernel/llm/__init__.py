"""The kernel's LLM bridge: upstream client, role settings, cache, per-call tokens and the loopback endpoint."""

from ..budgets import CallBudget
from .bridge import LLMBridge
from .errors import LLMError
from .events import LLMCallEvent
from .options import BridgeOptions, options_from_environ
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
