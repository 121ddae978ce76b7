"""Per-call tokens and per-request ledgers: who may call the bridge, and how many calls are left.

A token is issued for ONE plugin call and bound to (request, frame, plugin, role, calls it may make,
deadline). Every token of a request draws from the request's one budget object, so two plugins of the
same request share one count. Tokens die when their plugin call is released, when their deadline passes,
or when the request is expired; an upstream call still in flight for a released or expired token is
cancelled (its plugin is gone, nobody will read the answer).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from ..budgets import CallBudget
from .errors import LLM_TOKEN_INVALID, LLMError
from .events import LLMCallEvent

# A token outlives its call's deadline by this much: the kernel kills a late plugin anyway.
DEADLINE_GRACE_S = 1.0
CANCELLED_MESSAGE = (
    "the call of %s ended while its LLM call was in flight; the upstream request was cancelled"
)


@dataclass(slots=True)
class InFlight:
    """An upstream call of a grant: the event that records it, and when it started (perf_counter)."""

    event: LLMCallEvent
    started: float


@dataclass(slots=True)
class Grant:
    token: str
    request_id: str
    frame_id: str
    plugin_id: str
    role: str | None
    calls_allowed: int
    deadline: float  # time.monotonic() seconds
    call_ref: str | None = None
    calls_used: int = 0
    upstream: dict[asyncio.Future[Any], InFlight] = field(default_factory=dict)  # calls in flight
    revoked: bool = False
    recorded: list[LLMCallEvent] = field(default_factory=list)  # events `revoke` recorded

    def revoke(self) -> list[LLMCallEvent]:
        """The plugin call is over: an upstream call still in flight is wasted work, cancel it.

        Returns the events of the calls that were in flight, closed now (cancelled, or the answer that
        already arrived): the engine reads a plugin call's events as soon as it ends, before a cancelled
        call's own task runs again, and every charged call must be among them. That task leaves them be.
        """
        self.revoked = True
        closed: list[LLMCallEvent] = []
        for call, flight in self.upstream.items():
            event = flight.event
            if not call.done() or call.cancelled():
                call.cancel()
                event.failed(LLM_TOKEN_INVALID, CANCELLED_MESSAGE % self.plugin_id)
            elif (err := call.exception()) is None:
                event.answered(call.result())
            else:
                details = getattr(err, "details", {})
                code = getattr(err, "code", type(err).__name__)
                event.failed(code, str(err), int(details.get("attempts", 0) or 0))
            event.latencyMs = (time.perf_counter() - flight.started) * 1000.0
            closed.append(event)
        self.upstream.clear()
        self.recorded.extend(closed)
        return closed


@dataclass(slots=True)
class Ledger:
    request_id: str
    budget: CallBudget
    model: str = ""  # the request/session model (third level of role resolution)
    tokens: set[str] = field(default_factory=set)
    events: list[LLMCallEvent] = field(default_factory=list)


class TokenTable:
    """Every live token and request ledger of one bridge. Used from one event loop: no locks."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._grants: dict[str, Grant] = {}
        self._ledgers: dict[str, Ledger] = {}

    def open_request(self, request_id: str, budget: CallBudget, model: str = "") -> Ledger:
        ledger = self._ledgers.get(request_id)
        if ledger is None:
            ledger = self._ledgers[request_id] = Ledger(request_id, budget, model)
        else:
            ledger.budget, ledger.model = budget, model or ledger.model
        return ledger

    def ledger(self, request_id: str) -> Ledger | None:
        return self._ledgers.get(request_id)

    def issue(
        self,
        request_id: str,
        frame_id: str,
        plugin_id: str,
        role: str | None,
        calls_allowed: int,
        deadline: float,
        call_ref: str | None = None,
    ) -> str:
        if request_id not in self._ledgers:
            raise KeyError(f"request {request_id} has no LLM budget: call open_request first")
        token = "mrpvm-" + secrets.token_urlsafe(24)
        self._grants[token] = Grant(
            token, request_id, frame_id, plugin_id, role, max(0, calls_allowed), deadline, call_ref
        )
        self._ledgers[request_id].tokens.add(token)
        return token

    def check(self, token: str) -> tuple[Grant, Ledger]:
        """The live grant of a token, or LLM_TOKEN_INVALID (unknown, revoked, expired)."""
        grant = self._grants.get(token)
        if grant is None:
            raise LLMError(LLM_TOKEN_INVALID, "unknown or expired token")
        ledger = self._ledgers.get(grant.request_id)
        if ledger is None or self._clock() > grant.deadline + DEADLINE_GRACE_S:
            self._drop(token)
            raise LLMError(LLM_TOKEN_INVALID, "the token has expired (its plugin call is over)")
        return grant, ledger

    def release(self, token: str) -> int:
        """Revoke one token (its plugin call is over); returns the calls it made (0 if unknown)."""
        grant = self._drop(token)
        if grant is None:
            return 0
        closed = grant.revoke()
        ledger = self._ledgers.get(grant.request_id)
        if ledger is not None:
            ledger.events.extend(closed)
        return grant.calls_used

    def expire_request(self, request_id: str) -> list[LLMCallEvent]:
        """Revoke every token of a finished request; returns its undrained events."""
        ledger = self._ledgers.pop(request_id, None)
        if ledger is None:
            return []
        for token in ledger.tokens:
            grant = self._grants.pop(token, None)
            if grant is not None:
                ledger.events.extend(grant.revoke())
        return ledger.events

    def drain(self, request_id: str, call_ref: str | None = None) -> list[LLMCallEvent]:
        ledger = self._ledgers.get(request_id)
        if ledger is None:
            return []
        if call_ref is None:
            out, ledger.events = ledger.events, []
            return out
        out = [e for e in ledger.events if e.callRef == call_ref]
        ledger.events = [e for e in ledger.events if e.callRef != call_ref]
        return out

    def _drop(self, token: str) -> Grant | None:
        grant = self._grants.pop(token, None)
        if grant is not None:
            ledger = self._ledgers.get(grant.request_id)
            if ledger is not None:
                ledger.tokens.discard(token)
        return grant

    def live_tokens(self) -> int:
        return len(self._grants)
