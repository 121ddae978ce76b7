"""detectSeeds: a user turn becomes Intent Groups (DS004) and current-turn Context Units.

Questions and tasks become intents; output-shaping, validation, planning and decomposition instructions
become guidance KUs scoped to the phase that needs them (and shape the Output of the intents they apply
to); plain statements become evidence KUs (PhaseScopes kb-plugin). In `decompose` mode the prompt is one
intent to split into sub-intents for a child frame.

Entry: `detect_seeds`; the two modes are `detect.py` and `decompose.py`.
"""

from __future__ import annotations

from mrpvm.protocol.envelope import DetectSeedsPayload

from .decompose import decompose_intent
from .detect import SeedOutcome, detect_intents

__all__ = ["SeedOutcome", "detect_seeds"]


def detect_seeds(prompt: str, payload: DetectSeedsPayload, created_at: str = "") -> SeedOutcome:
    turn_id = "-".join((payload.turnId or "turn").split())
    if payload.mode == "decompose":
        return decompose_intent(prompt, payload, turn_id, created_at)
    return detect_intents(prompt, payload, turn_id, created_at)
