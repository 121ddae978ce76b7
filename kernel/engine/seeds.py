"""One seed (docs/ARCHITECTURE.md §4, steps 5–7): knowledge views × goal solvers, validation, decomposition.

Per seed: the next knowledge view (views.py), then gs candidates on it until an answer survives
validation; `no-context` tries the next gs-plugin, a rejection is remembered and the next candidate
tried; `needs-decomposition` (or the plan's `decompose`) opens a child frame whose answers return to
the seed. When every path is weak, the best weak answer is returned with a `weak recovery` warning.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

import anyio
from mrpvm.protocol.document import IntentGroup, Plan
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

from ..trace import PROMPT_PREVIEW, clip
from .calls import FALLING_BACK
from .deliberation import Candidate, choose
from .early import Early, early_solve_of
from .frame import ExecutionFrame, FrameOutcome
from .payloads import solve_key
from .response import SeedOutcome, combine_children
from .scope import BranchRun
from .stages import next_view, prestart_views, solve, validate
from .state import TurnState, intent_key
from .views import View, empty_view


class _Slot:
    """A seed's hold on the request-wide seed limiter; released while the seed waits for a child frame."""

    __slots__ = ("limiter", "held")

    def __init__(self, limiter: anyio.CapacityLimiter):
        self.limiter, self.held = limiter, False

    async def acquire(self) -> None:
        try:
            self.limiter.acquire_nowait()  # a free slot needs no trip through the event loop
        except anyio.WouldBlock:
            await self.limiter.acquire()
        self.held = True

    def release(self) -> None:
        if self.held:
            self.held = False
            self.limiter.release()


class RunFrame(Protocol):
    """`frame_run.run_frame`, handed to each seed so a decomposed seed can run its child frame."""

    def __call__(
        self, state: TurnState, frame: ExecutionFrame, *, parent: str, ref_prefix: str
    ) -> Awaitable[FrameOutcome]: ...


class SeedRun:
    """Resolve one seed: decomposition branch (if planned), knowledge views × goal solvers, validation."""

    def __init__(
        self,
        state: TurnState,
        frame: ExecutionFrame,
        branch: BranchRun,
        intent: IntentGroup,
        ref: str,
        plan: Plan,
        run_frame: RunFrame,
        early: Early | None = None,
    ):
        self.state = state
        self.run_frame = run_frame  # how a decomposed seed runs its child frame (frame_run.run_frame)
        self.frame = frame
        self.branch = branch
        self.intent = intent
        self.ref = ref
        self.plan = plan
        self.early = early  # its first retrieve, started while the planner planned (start_early_views)
        self.key = intent_key(intent)
        self.candidates: list[SeedOutcome] = []
        self.decomposed = False
        self.slot = _Slot(state.limiter)
        self.node_id = ""
        self.last_step: str | None = None  # the last view or decomposition node, for next-view/next-branch

    async def run(self, best: dict[str, SeedOutcome]) -> SeedOutcome:
        trace, frame = self.state.trace, self.frame
        node = trace.node(
            "seed",
            f"{self.ref} {self.intent.act}: {clip(self.intent.intent, 120)}",
            parent=self.branch.node.id,
            frameId=frame.frame_id,
            input={"act": self.intent.act, "intent": clip(self.intent.intent, PROMPT_PREVIEW)},
        )
        self.node_id = node.id
        frame.seeds.append(node.id)
        prior = best.get(self.key)
        if prior is not None and prior.status == "success":
            node.ref = f"reuses {prior.seed_node}"
            trace.edge(prior.seed_node, node.id, "reuses")
            trace.finish(node, "success")
            return prior
        await self.slot.acquire()
        try:
            outcome = await self._resolve()
        finally:
            self.slot.release()
        outcome.seed_node = node.id
        trace.finish(node, outcome.status)
        return outcome

    def _outcome(self, status: str, **fields: Any) -> SeedOutcome:
        return SeedOutcome(
            intent=self.intent, ref=self.ref, status=status, frame_id=self.frame.frame_id, **fields
        )

    async def _resolve(self) -> SeedOutcome:
        token = FALLING_BACK.set(FALLING_BACK.get())  # what this seed sets stays in this seed
        try:
            return await self._resolve_views()
        finally:
            FALLING_BACK.reset(token)

    async def _resolve_views(self) -> SeedOutcome:
        state, frame = self.state, self.frame
        if self.plan.decompose:
            done = await self._decompose(self.node_id, "the plan asked for decomposition")
            if done is not None:
                return done
        kb_order, cursor = self.plan.kbPluginOrder, [0]
        previous: list[str | None] = [None]
        views = 0
        spent = ""
        solved: set[str] = set()  # the evidence of every view solved without an accepted answer
        while True:
            view = await next_view(
                state,
                frame,
                self.branch,
                self.intent,
                kb_order,
                cursor,
                self.node_id,
                previous,
                ref=self.ref,
                early=self.early,
                settled=solved,
            )
            if view is None:
                if views:
                    break
                view = empty_view()
            views += 1
            done, gs_next = await self._solve_view(view, views)
            if done is not None:
                if state.deliberation > 0 and done.status == "success" and done.gs_plugin != "decomposition":
                    return await self._deliberate(
                        Candidate(done, view), views, gs_next, kb_order, cursor, previous
                    )
                return done
            if cursor[0] >= len(kb_order):
                break
            if view.evidence and view.key in solved:
                self._converged(view, len(kb_order) - cursor[0])
                break
            solved.add(view.key)
            if state.budget.fallback_spent():
                spent = f"fallback budget spent ({state.budget.fallback_calls_total} calls): no further views"
                break
            if views == 1:  # the first view was weak: the next view's worker starts (the rest: next_view)
                prestart_views(state, kb_order, cursor[0], limit=1)
        if self.candidates:
            best = max(self.candidates, key=lambda o: o.rank())
            if len(self.candidates) > 1 or best.status != "success":
                best.warnings.append(
                    f"weak recovery: best of {len(self.candidates)} weak answers ({best.status})"
                )
            if spent:
                best.warnings.append(spent)
            return best
        return self._outcome(
            "failed",
            answer=NO_CONTEXT_ANSWER,
            warnings=["no goal solver produced an answer for this intent"],
            node_id=self.node_id,
        )

    def _converged(self, view: View, left: int) -> None:
        """`view` repeated an earlier view's evidence: two kb-plugins agree on what the KB holds for this seed,
        so the `left` later kb-plugins are not asked. Their calls (a retrieve and the solves) are charged to the
        fallback budget as if made, so what the turn does next (another planner) is what the full walk left."""
        budget = self.state.budget
        for _ in range(left * (1 + len(self.plan.goalSolverOrder))):
            if not budget.take_fallback_call():
                break
        node = self.state.trace.node(
            "event",
            f"{view.plugin_id} selected the evidence of an earlier view: the views converged; "
            f"{left} further kb-plugin(s) not asked",
            parent=self.node_id,
            frameId=self.frame.frame_id,
            status="converged",
        )
        self.state.trace.edge(self.last_step, node.id, "next-view")

    async def _deliberate(
        self,
        first: Candidate,
        views: int,
        gs_next: int,
        kb_order: list[str],
        cursor: list[int],
        previous: list[str | None],
    ) -> SeedOutcome:
        """Comparative deliberation (deliberation.py): up to `state.deliberation` more accepted answers,
        in backtracking order (the view's remaining gs candidates, then the next views), then the best."""
        state, frame = self.state, self.frame
        pool, view = [first], first.view
        seen = {view.key}
        vnode = self.last_step
        while len(pool) <= state.deliberation and not state.budget.expired():
            if gs_next < len(self.plan.goalSolverOrder):
                done, gs_next = await self._solve_view(
                    view, views, gs_from=gs_next, vnode=vnode, explore=True
                )
                if done is not None:
                    pool.append(Candidate(done, view))
                continue
            following = await next_view(
                state, frame, self.branch, self.intent, kb_order, cursor, self.node_id, previous, ref=self.ref
            )
            if following is None:
                break
            view = following
            views, gs_next = views + 1, 0
            if view.key in seen:  # the same evidence as an explored view: the same answers
                gs_next = len(self.plan.goalSolverOrder)
                self._view_node(view, views, note="same evidence as an explored view; not solved again")
            else:
                vnode = self._view_node(view, views)
            seen.add(view.key)
        return choose(state, self.node_id, frame.frame_id, pool)

    async def _solve_view(
        self, view: View, number: int, *, gs_from: int = 0, vnode: str | None = None, explore: bool = False
    ) -> tuple[SeedOutcome | None, int]:
        """gs candidates on one view (from `gs_from` on) until an answer survives validation: (that answer
        or None to backtrack further, the index of the next gs candidate). `vnode`: the view's trace node
        when the view was already explored; `explore`: deliberation's extra answers (no child frame)."""
        state, frame, trace = self.state, self.frame, self.state.trace
        resumed = explore
        vnode = vnode or self._view_node(view, number)
        warnings = (
            []
            if view.sufficient or view.plugin_id is None
            else [f"evidence judged insufficient by {view.plugin_id}"]
        )
        previous = None
        order = self.plan.goalSolverOrder
        for index in range(gs_from, len(order)):
            plugin_id = order[index]
            attempt = await solve(
                state,
                frame,
                self.branch,
                plugin_id,
                self.intent,
                view,
                vnode,
                allow_decompose=frame.can_open_child and not self.decomposed and not resumed,
                ref=self.ref,
                early=early_solve_of(self.early),
            )
            trace.edge(previous, attempt.node.id, "next-candidate")
            previous = attempt.node.id
            if view.node is not None:
                trace.edge(view.node.id, attempt.node.id, "uses")
            doc, status = attempt.doc, attempt.status
            common = {
                "sources": list(doc.sources or []) if doc else [],
                "evidence": view.evidence,
                "confidence": doc.result.confidence if doc else None,
                "kb_plugin": view.plugin_id,
                "gs_plugin": plugin_id,
                "node_id": attempt.node.id,
            }
            if status == "success" and doc is not None and doc.answer is not None:
                verdict, notes, _ = await validate(
                    state,
                    frame,
                    self.branch,
                    self.plan.validatorOrder,
                    self.intent,
                    attempt,
                    view,
                    ref=self.ref,
                )
                outcome = self._outcome(
                    verdict if verdict == "rejected" else "success",
                    answer=doc.answer,
                    validation=verdict,
                    warnings=[*warnings, *notes],
                    **common,
                )
                if verdict != "rejected":
                    return outcome, index + 1
                frame.failures.remember(solve_key(plugin_id, self.intent, view), "rejected", attempt.node.id)
                self.candidates.append(outcome)
            elif status in ("no-context", "insufficient") and doc is not None:
                self.candidates.append(
                    self._outcome(
                        "no-context",
                        answer=doc.answer or NO_CONTEXT_ANSWER,
                        warnings=[*warnings, f"{plugin_id} found no usable evidence ({status})"],
                        **common,
                    )
                )
            elif status == "needs-decomposition" and not resumed:
                done = await self._decompose(attempt.node.id, f"{plugin_id} returned needs-decomposition")
                if done is not None:
                    return done, index + 1
            if not explore:
                FALLING_BACK.set(True)  # no accepted answer yet: what this seed tries next is backtracking
        return None, len(order)

    def _view_node(self, view: View, number: int, note: str = "") -> str:
        """The trace node of a knowledge view (next-view / next-branch from the last step); its id."""
        trace, frame = self.state.trace, self.frame
        if view.plugin_id is None:
            label = "knowledge view: none (no kb-plugin produced a view)"
        else:
            quality = "sufficient" if view.sufficient else "best insufficient"
            label = f"knowledge view {number}: {view.plugin_id} ({quality}, {len(view.evidence)} units)"
        if note:
            label += f" — {note}"
        vnode = trace.node(
            "event",
            label,
            parent=self.node_id,
            frameId=frame.frame_id,
            status="sufficient" if view.sufficient else "insufficient",
            output={
                "evidence": [u.id for u in view.evidence][:24],
                "guidance": [u.id for u in view.guidance],
            },
        )
        if view.node is not None:
            trace.edge(view.node.id, vnode.id, "produces")
        trace.edge(
            self.last_step, vnode.id, "next-branch" if self.decomposed and number == 1 else "next-view"
        )
        self.last_step = vnode.id
        frame.retrieved[self.ref] = view.evidence
        return vnode.id

    async def _decompose(self, trigger: str, reason: str) -> SeedOutcome | None:
        """Open a child frame for this seed (once per seed, within maxDepth); its answers return here."""
        state, frame, trace = self.state, self.frame, self.state.trace
        if self.decomposed:
            return None
        if not frame.can_open_child:
            trace.node(
                "event",
                f"decomposition refused: depth {frame.depth + 1} exceeds maxDepth {frame.max_depth}",
                parent=trigger,
                frameId=frame.frame_id,
                status="depth-limit",
            )
            self.candidates.append(
                self._outcome(
                    "failed",
                    warnings=[f"decomposition stopped at maxDepth {frame.max_depth}"],
                    node_id=trigger,
                )
            )
            return None
        self.decomposed = True
        child = frame.child(prompt=self.intent.intent, parent_intent=self.intent)
        self.slot.release()  # a waiting parent must not hold a seed slot its children need
        try:
            result = await self.run_frame(state, child, parent=self.node_id, ref_prefix=f"{self.ref}.")
        finally:
            await self.slot.acquire()
        trace.edge(trigger, result.node_id, "decomposes")
        trace.get(result.node_id).label += f" — {reason}"
        if self.last_step is None:
            self.last_step = result.node_id
        outcome = self._outcome("failed", node_id=result.node_id, gs_plugin="decomposition")
        combine_children(outcome, result.outcomes or [])
        if outcome.status == "success":
            return outcome
        self.candidates.append(outcome)
        return None
