"""What each stage sends (protocol/SPEC.md §8): the request payloads of detectSeeds, retrieve and solve,
and the memo keys of their results (what a call's result depends on). The stage calls (stages.py) and
the calls started early (early.py) build them here, so an early call is exactly the call it stands for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import DetectSeedsPayload, RetrievePayload, SeedMode, SolvePayload

from .frame import ExecutionFrame
from .scope import MemoKey
from .state import MAX_HISTORY, intent_key
from .views import View

if TYPE_CHECKING:
    from .state import TurnState


def seed_request(
    state: TurnState, frame: ExecutionFrame
) -> tuple[SeedMode, DetectSeedsPayload, list[KnowledgeUnit]]:
    """(mode, payload, guidance) of a frame's detectSeeds calls: independent of the plan."""
    mode: SeedMode = "decompose" if frame.purpose == "decompose" else "turn"
    payload = DetectSeedsPayload(
        turnId=state.request_id,
        mode=mode,
        parentIntent=frame.parent_intent,
        history=state.history[-MAX_HISTORY:],
    )
    return mode, payload, state.guidance(("sd-plugin",))


def seed_key(plugin_id: str, mode: str, frame: ExecutionFrame) -> MemoKey:
    return ("sd", plugin_id, mode, frame.prompt)


def retrieve_key(state: TurnState, plugin_id: str, intent: IntentGroup) -> MemoKey:
    """A retrieve's result depends on the intent and on the units staged so far."""
    return ("kb", plugin_id, intent_key(intent), str(len(state.staged)))


def retrieve_payload(state: TurnState, intent: IntentGroup, units: list[KnowledgeUnit]) -> RetrievePayload:
    return RetrievePayload(intents=[intent], units=units, kbId=state.kb_id, purpose="task-evidence")


def solve_payload(state: TurnState, intent: IntentGroup, view: View, allow_decompose: bool) -> SolvePayload:
    return SolvePayload(
        intent=intent,
        evidence=view.evidence,
        guidance=state.guidance(("gs-plugin",), view.guidance),
        resolved=view.resolved,
        allowDecompose=allow_decompose,
    )


def solve_key(plugin_id: str, intent: IntentGroup, view: View) -> MemoKey:
    """A solve's result depends on the intent and the view's evidence (also the failure-memory key)."""
    return ("gs", plugin_id, intent_key(intent), view.key)
