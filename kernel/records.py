"""What the store returns: msgspec Structs for KB repositories, sources, sessions, turns and planner stats."""

from __future__ import annotations

from typing import Any

import msgspec
from mrpvm.protocol.envelope import Pins


class KbRecord(msgspec.Struct, kw_only=True):
    """A KB repository (DS026): a cryptographically random id and a unique name."""

    id: str
    name: str
    createdAt: str


class SourceRecord(msgspec.Struct, kw_only=True):
    """One ingested source of a KB; `hash` is the sha256 of its text (same hash = no re-ingest)."""

    id: str
    kbId: str
    name: str
    sourceType: str = "text"
    hash: str = ""
    bytes: int = 0
    unitCount: int = 0
    ingestedAt: str = ""


class SessionRecord(msgspec.Struct, kw_only=True):
    """A chat session (DS019): the mounted KB, plugin preferences, how many turns it holds, its title."""

    id: str
    kbId: str | None = None
    preferences: Pins = Pins()
    createdAt: str = ""
    updatedAt: str = ""
    turnCount: int = 0
    deliberationLevel: int = (
        0  # comparative deliberation (0..budgets.MAX_DELIBERATION); 0: first accepted answer
    )
    title: str = ""


SESSION_TITLE_CHARS = 60


def title_from_question(message: str) -> str:
    """An untitled session's title: its first question, whitespace collapsed, cut at a word boundary to
    at most SESSION_TITLE_CHARS characters (with '…' when cut)."""
    text = " ".join(message.split())
    if len(text) <= SESSION_TITLE_CHARS:
        return text
    cut = text[: SESSION_TITLE_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > SESSION_TITLE_CHARS // 2 else cut).rstrip(" ,;:") + "…"


class TurnRecord(msgspec.Struct, kw_only=True):
    """One committed turn: the user message, the response (Markdown + document) and its trace DAG."""

    requestId: str
    sessionId: str
    turnIndex: int = 0
    userMessage: str = ""
    responseMarkdown: str = ""
    responseDocument: dict[str, Any] = {}
    trace: dict[str, Any] = {}
    status: str = "success"
    pluginIds: dict[str, str] = {}
    llmCalls: int = 0
    durationMs: float = 0.0
    createdAt: str = ""
    answerTruncated: bool = False  # the stored answer was cut to engine.limits.maxStoredAnswerBytes


class PlannerStats(msgspec.Struct, kw_only=True):
    """Kernel-kept planner-level utility (EWMA of success and latency) used to rank planners."""

    plannerId: str
    successRate: float = 0.5
    latencyMs: float = 0.0
    samples: int = 0
    updatedAt: str = ""


class PlannerOutcome(msgspec.Struct):
    """One planner's result in a turn, folded into its PlannerStats by `Store.commit_turn`."""

    plannerId: str
    success: bool
    latencyMs: float
