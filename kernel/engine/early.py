"""Calls started ahead of their turn, to overlap another plugin's call (docs/ARCHITECTURE.md §4, "Overlap").

Two chains are speculated, both only for plugins that declare no LLM calls, so the outcome is the same
as calling in sequence:

- `start_early_seeds`: the sd-plugin the pre-seed plan is expected to put first (what this planner put first last
  time, else the kernel's default order) starts `detectSeeds` while the planner plans pre-seed;
- `start_early_views`: with nothing staged, each seed's first retrieve (from the kb-plugin the pre-seed plan put
  first) starts while the planner plans post-seed; once it returns a sufficient view, the solve by the
  pre-seed plan's first gs-plugin starts on it. Without a pre-seed plan (no sd order to choose) nothing
  guesses the first kb-plugin, so no retrieve starts early: a wrong guess costs a kb- and a gs-plugin
  call, and in a one-turn `mrpvm ask` a worker start, for nothing.

The stage logic asks `fitting_early(...)` at each call it makes: an early call is used only if it
stands for exactly that call (same plugin, memo key and request), and is then recorded exactly like a
call made there (`call_plugin(..., early=...)`). One never reached is an `unused` event node.
The functions below are the one interface frames and stages use (start, fit, settle, cancel); `Early`
is one such call. Nothing else in the engine knows how a call is started early.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from mrpvm.protocol.document import IntentGroup, KnowledgeUnit, Plan
from mrpvm.protocol.envelope import Payload, Request
from mrpvm.protocol.vocab import Op

from ..supervisor import CallResult, PluginCallError
from .calls import build_request
from .concurrency import hold_spin
from .frame import ExecutionFrame
from .payloads import retrieve_key, retrieve_payload, seed_key, seed_request, solve_key, solve_payload
from .scope import Attempt, BranchRun, MemoKey
from .state import intent_key
from .views import view_from

if TYPE_CHECKING:
    from .response import SeedOutcome
    from .state import TurnState

log = logging.getLogger("mrpvm.kernel")


class Early:
    """A plugin call started before its turn in the stage logic.

    Only the supervisor call runs early: the trace node, the attempt, the failure memory and the
    planner's attempt list are recorded when (and only if) the stage logic reaches that call; an early
    call never reached is recorded as an `event` node by `discard`.
    """

    def __init__(
        self, state: TurnState, plugin_id: str, request: Request, timeout_s: float, key: MemoKey
    ) -> None:
        self.state = state
        self.plugin_id = plugin_id
        self.request = request
        self.timeout_s = timeout_s
        self.key = key  # the memo key of the call it stands for
        self.started = time.perf_counter()
        self.result: CallResult | None = None
        self.failure: PluginCallError | None = None
        self.used = False
        # `follow(self)`, run once this call answered, may start the call that would come next on its
        # result (an early retrieve's solve): kept as `next`, used or discarded like this one
        self.follow: Callable[[Early], Early | None] | None = None
        self.next: Early | None = None
        # Counted as in flight from now on, so the call the caller makes meanwhile does not busy-poll
        # its reply (see `hold_spin`) before this one has sent its request.
        self._hold: AbstractContextManager[None] | None = hold_spin(state.ctx.supervisor)
        self._hold.__enter__()
        self.task = asyncio.get_running_loop().create_task(self._run())
        self.task.add_done_callback(lambda _: self._release())

    def _release(self) -> None:
        if self._hold is not None:
            hold, self._hold = self._hold, None
            hold.__exit__(None, None, None)

    async def _run(self) -> None:
        calls = self.state.calls
        if calls.earlier_pending(self.plugin_id):
            await calls.after_earlier(self.plugin_id)
        self._release()
        calls.mark_busy()
        try:
            self.result = await self.state.ctx.supervisor.call(
                self.plugin_id, self.request, timeout_s=self.timeout_s
            )
        except PluginCallError as err:
            self.failure = err
        finally:
            calls.mark_idle()
        if self.follow is not None and self.result is not None:
            try:
                self.next = self.follow(self)
            except Exception:  # noqa: BLE001 - a follow-up is an optimisation: the stage logic calls anyway
                log.exception("could not start the call that follows an early %s", self.request.op)

    async def outcome(self) -> tuple[CallResult | None, PluginCallError | None]:
        self.used = True
        await self.task
        return self.result, self.failure

    async def settle(self) -> None:
        """Wait for the call to end. An unused call's unexpected failure is not the turn's: a call made
        in sequence would never have been made."""
        try:
            await self.task
        except Exception:
            if self.used:
                raise

    def cancel(self) -> None:
        self.task.cancel()
        if self.next is not None:
            self.next.cancel()

    def discard(self, parent: str, frame_id: str, reason: str) -> None:
        """Record an early call the stage logic did not use (its result is dropped)."""
        if self.used:
            return
        self.used = True
        if self.failure is not None:
            status = self.failure.error.code
        elif self.result is not None:
            status = self.result.document.result.status
        else:
            status = "error" if self.task.done() else "running"
        node = self.state.trace.node(
            "event",
            f"early {self.request.op} by {self.plugin_id} not used: {reason}",
            parent=parent,
            frameId=frame_id,
            pluginId=self.plugin_id,
            status="unused",
            output={"callStatus": status},
        )
        node.durationMs = 0.0


# --------------------------------------------------------------------------- detectSeeds beside the plan


def start_early_seeds(state: TurnState, frame: ExecutionFrame, branch: BranchRun) -> Early | None:
    """Start the expected first sd-plugin's detectSeeds while the branch's planner plans pre-seed."""
    if branch.planner_id is None:
        return None
    guess = state.static.sd_first.get(branch.planner_id) if state.pins.sd is None else None
    if guess is None or guess not in state.enabled_ids("sd-plugin"):
        defaults = state.stage_order("sd", None)
        guess = defaults[0] if defaults else None
    if guess is None:
        return None
    mode, payload, guidance = seed_request(state, frame)
    key = seed_key(guess, mode, frame)
    return _start(state, frame, guess, "detectSeeds", frame.prompt, guidance, payload, key)


def remember_sd_first(state: TurnState, planner_id: str | None, plan: Plan | None, order: list[str]) -> None:
    """Remember what a planner's pre-seed plan put first: the guess for its next turn (per kernel context)."""
    if plan is not None and order:
        state.static.sd_first[planner_id] = order[0]


async def settle_early_seeds(
    early: Early | None, branch: BranchRun, frame: ExecutionFrame, order: list[str], tried: list[Attempt]
) -> None:
    """Wait for the early detectSeeds to end; record it as unused (with why) if the stages did not use it."""
    if early is None:
        return
    await early.settle()
    if early.plugin_id not in order:
        why = "the plan did not list it"
    elif any(a.plugin_id == early.plugin_id for a in tried):
        why = "the call its turn came to differed (or its result was known)"
    else:
        why = "an earlier candidate answered"
    early.discard(branch.node.id, frame.frame_id, why)  # no-op when it was used


# --------------------------------------------------------------------------- retrieve (then solve) beside the plan


def start_early_views(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    intents: list[IntentGroup],
    pre: Plan | None,
    best: dict[str, SeedOutcome],
) -> dict[int, Early]:
    """Seed index -> its first retrieve, started now (only when a planner will plan post-seed and its
    pre-seed plan `pre` says which kb-plugin comes first); once it answers with a sufficient view, the
    solve by the pre-seed plan's first gs-plugin starts on it (`Early.follow`), while the planner may
    still be planning post-seed."""
    if branch.planner_id is None or pre is None or not intents:
        return {}
    order = state.stage_order("kb", pre)
    if not order:
        return {}
    solvers = state.stage_order("gs", pre)
    early: dict[int, Early] = {}
    for index, intent in enumerate(intents[: int(state.limiter.total_tokens)]):
        prior = best.get(intent_key(intent))
        if prior is not None and prior.status == "success":
            continue  # the seed reuses that answer
        key = retrieve_key(state, order[0], intent)
        if state.calls.known(frame, key):
            continue  # before building the payload
        units = state.visible_units()
        payload = retrieve_payload(state, intent, units)
        item = _start(state, frame, order[0], "retrieve", intent.intent, units, payload, key)
        if item is not None:
            if solvers:
                item.follow = _solve_after(state, frame, intent, solvers[0])
            early[index] = item
    return early


def _solve_after(
    state: TurnState, frame: ExecutionFrame, intent: IntentGroup, plugin_id: str
) -> Callable[[Early], Early | None]:
    """What an early retrieve starts once it answered: `plugin_id`'s solve on its view, if the view is
    sufficient (what `stages.solve` would send if the plan starts with that kb- and gs-plugin)."""

    def follow(retrieve: Early) -> Early | None:
        result = retrieve.result
        if result is None:
            return None
        doc = result.document
        view = view_from(retrieve.plugin_id, doc.result.status, doc, None)
        if view is None or not view.sufficient:
            return None
        key = solve_key(plugin_id, intent, view)
        payload = solve_payload(state, intent, view, frame.can_open_child)
        return _start(state, frame, plugin_id, "solve", intent.intent, view.evidence, payload, key)

    return follow


def early_solve_of(retrieve: Early | None) -> Early | None:
    """The solve an early retrieve started on its view, once the seed used that retrieve."""
    return retrieve.next if retrieve is not None and retrieve.used else None


async def settle_early_views(early: dict[int, Early], branch: BranchRun, frame: ExecutionFrame) -> None:
    """Every seed is done: wait for the early retrieves and solves, recording the unused ones."""
    for item in early.values():
        item.follow = None  # a solve started on a late view now could not be used
    for item in early.values():
        await item.settle()
        item.discard(
            branch.node.id, frame.frame_id, "the plan did not start with it or the seed did not need it"
        )
        if item.next is not None:
            await item.next.settle()
            item.next.discard(
                branch.node.id, frame.frame_id, "the plan did not start with it or the view differed"
            )


# --------------------------------------------------------------------------- at the point of use


def fitting_early(
    state: TurnState,
    early: Early | None,
    frame: ExecutionFrame,
    plugin_id: str,
    key: MemoKey,
    payload: Payload = None,
    units: list[KnowledgeUnit] | None = None,
) -> Early | None:
    """`early` if it stands for exactly the call about to be made (same plugin and memo key, and
    `payload` and context `units` when given), is not used yet, and that call's result is not
    known in this frame. (A memo key leaves out what may change while an early call runs: a
    sibling frame may stage guidance meanwhile.)"""
    if (
        early is None
        or early.used
        or early.plugin_id != plugin_id
        or early.key != key
        or (payload is not None and early.request.payload != payload)
        or (units is not None and early.request.context != state.context_items(units))
        or state.calls.known(frame, key)
    ):
        return None
    return early


def cancel_early(*early: Early | None) -> None:
    for item in early:
        if item is not None:
            item.cancel()


def _start(
    state: TurnState,
    frame: ExecutionFrame,
    plugin_id: str,
    op: Op,
    prompt: str,
    units: list[KnowledgeUnit],
    payload: Payload,
    key: MemoKey,
) -> Early | None:
    """Start a call ahead of its turn, or None when that could change anything: only plugins that
    declare no LLM calls, while the deadline allows, and only if the result of the call with memo
    key `key` is not already known in this frame."""
    if state.calls.known(frame, key):
        return None
    info = state.plugin_info(plugin_id)
    if info.max_llm_calls > 0:
        return None
    timeout_s = state.budget.call_window_s(info.timeout_ms)
    if timeout_s is None:
        return None
    request = build_request(state, frame, plugin_id, op, prompt, units, payload, timeout_s=timeout_s)
    return Early(state, plugin_id, request, timeout_s, key)
