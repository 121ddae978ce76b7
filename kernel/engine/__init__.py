"""The kernel loop (docs/ARCHITECTURE.md §4): one chat turn through planners, frames, seeds and backtracking.

Read top-down: turn.py (`run_turn`: open, run the root frame, respond, commit) → frames.py (a planner
branch per frame: plan, detect seeds, plan again, run the seeds) → seeds.py (knowledge views × goal
solvers, validation, decomposition) → stages.py (each stage's candidates) → calls.py (one plugin call).
Beside them: state.py (what a turn's frames share), payloads.py (what each stage sends), views.py,
early.py (calls started ahead of their turn), warm_start.py (the workers a one-turn process starts
first), concurrency.py and background.py (calls side by side and after the answer), outcome.py
(recordOutcome and the commit), response.py (the response document).

The names below load their module on first use, so `from mrpvm.kernel.engine.warm_start import …` does not
load the turn's modules: a one-turn `mrpvm ask` starts its workers first and imports the rest beside them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .state import PIN_TYPES, check_pins
    from .turn import TurnRequest, TurnResult, run_turn
    from .warm_start import prestart_turn

_HOMES = {
    "PIN_TYPES": "state",
    "check_pins": "state",
    "TurnRequest": "turn",
    "TurnResult": "turn",
    "run_turn": "turn",
    "prestart_turn": "warm_start",
}

__all__ = ["PIN_TYPES", "TurnRequest", "TurnResult", "check_pins", "prestart_turn", "run_turn"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
