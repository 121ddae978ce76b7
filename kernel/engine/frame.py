"""Execution frames (docs/ARCHITECTURE.md §4): one per task; a child frame is pushed when a seed needs decomposition.

A frame holds its local state (intents, current-turn KUs it staged, retrieved KUs, the plan, partial
results) and its failure memory; what the whole request shares (budget, trace, staged units, session)
lives in the engine's turn state, which each frame references.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Literal, get_args

import msgspec
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit, Plan

if TYPE_CHECKING:
    from .response import SeedOutcome

FrameStatus = Literal["running", "success", "weak", "failed"]
FRAME_STATUSES: tuple[str, ...] = get_args(FrameStatus)


def new_frame_id() -> str:
    return "frame-" + secrets.token_hex(4)


class FailureMemory:
    """What failed in this frame and why, keyed so a later branch does not repeat a known failure.

    A key names the stage, plugin and the input it failed on (e.g. the intent and the evidence view).
    `notes()` is the short form a planner receives in `BuildPlanPayload.failures`.
    """

    __slots__ = ("_known", "_notes")

    def __init__(self) -> None:
        self._known: dict[tuple[str, ...], tuple[str, str]] = {}
        self._notes: list[str] = []

    def remember(self, key: tuple[str, ...], status: str, node_id: str) -> None:
        if key not in self._known:
            self._known[key] = (status, node_id)
            self._notes.append(f"{key[0]}:{key[1]}:{status}")

    def recall(self, key: tuple[str, ...]) -> tuple[str, str] | None:
        return self._known.get(key)

    def notes(self) -> list[str]:
        return list(dict.fromkeys(self._notes))

    def __len__(self) -> int:
        return len(self._known)


class FrameSummary(msgspec.Struct, kw_only=True, omit_defaults=True):
    frameId: str
    parentFrameId: str | None = None
    requestId: str
    depth: int
    maxDepth: int
    status: FrameStatus
    purpose: str
    seeds: list[str] = []
    branches: list[str] = []
    failures: list[str] = []


class FrameOutcome(msgspec.Struct, kw_only=True):
    """What running a frame produced: its node, status and the seeds' outcomes (None: no seeds)."""

    node_id: str
    status: FrameStatus
    outcomes: list[SeedOutcome] | None
    planner_id: str | None = None
    sd_plugin: str | None = None


class ExecutionFrame:
    """A frame: identity, depth limit, status, seeds, branches, failure memory and local state."""

    def __init__(
        self,
        request_id: str,
        *,
        depth: int = 0,
        max_depth: int = 3,
        parent: ExecutionFrame | None = None,
        purpose: str = "turn",
        prompt: str = "",
        parent_intent: IntentGroup | None = None,
    ):
        self.frame_id = new_frame_id()
        self.parent_frame_id = parent.frame_id if parent else None
        self.request_id = request_id
        self.depth = depth
        self.max_depth = max_depth
        self.status: FrameStatus = "running"
        self.purpose = purpose
        self.prompt = prompt
        self.parent_intent = parent_intent
        self.seeds: list[str] = []  # seed node ids
        self.branches: list[str] = []  # branch (planner attempt) node ids
        self.failures = FailureMemory()
        # local state
        self.intents: list[IntentGroup] = []
        self.current_turn_units: list[KnowledgeUnit] = []
        self.retrieved: dict[str, list[KnowledgeUnit]] = {}
        self.plan: Plan | None = None
        self.partial: dict[str, SeedOutcome] = {}  # seed ref -> the frame's answer for it
        self.node_id: str | None = None

    @property
    def can_open_child(self) -> bool:
        return self.depth + 1 <= self.max_depth

    def child(self, *, prompt: str, parent_intent: IntentGroup) -> ExecutionFrame:
        """A sub-frame one level deeper; it shares the request budget through the turn state."""
        return ExecutionFrame(
            self.request_id,
            depth=self.depth + 1,
            max_depth=self.max_depth,
            parent=self,
            purpose="decompose",
            prompt=prompt,
            parent_intent=parent_intent,
        )

    def summary(self) -> FrameSummary:
        return FrameSummary(
            frameId=self.frame_id,
            parentFrameId=self.parent_frame_id,
            requestId=self.request_id,
            depth=self.depth,
            maxDepth=self.max_depth,
            status=self.status,
            purpose=self.purpose,
            seeds=list(self.seeds),
            branches=list(self.branches),
            failures=self.failures.notes(),
        )
