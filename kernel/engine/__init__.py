"""The kernel loop (docs/ARCHITECTURE.md §4): one chat turn through planners, frames, seeds and backtracking."""

from .stages import PIN_TYPES, check_pins
from .turn import TurnRequest, TurnResult, run_turn

__all__ = ["PIN_TYPES", "TurnRequest", "TurnResult", "check_pins", "run_turn"]
