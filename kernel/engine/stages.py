"""Per-stage work of the kernel loop: the turn's shared state, one plugin call, and candidate iteration.

Every plugin call goes through `TurnState.call`, which applies the budget (skipped-budget), the frame's
failure memory (a call that already failed on the same input is not repeated), builds the request,
calls the supervisor and records a trace node. The stage functions iterate candidates in plan order and
return what the engine needs; they look at statuses and section structure only, never at claim text.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit, Plan, ResolvedIntent
from mrpvm.protocol.envelope import (
    Budget,
    BuildPlanPayload,
    ContextItem,
    Descriptor,
    DetectSeedsPayload,
    KnowledgeProfile,
    OnSessionEventPayload,
    OutcomeAttempt,
    Paths,
    Pins,
    PluginStats,
    Request,
    RetrievePayload,
    SolvePayload,
    ValidatePayload,
    unit_to_context_item,
)

from ..budgets import RequestBudget
from ..errors import UnknownPluginError
from ..frames import ExecutionFrame
from ..llm.hooks import grant, settle
from ..supervisor import PluginCallError
from ..trace import PROMPT_PREVIEW, TraceNode, TraceRecorder, clip, summarize_output
from .early import Early, run_all

if TYPE_CHECKING:
    from ..context import KernelContext
    from ..records import KbRecord, SessionRecord

SKIPPED_BUDGET = "skipped-budget"
SKIPPED_KNOWN = "skipped-known-failure"
STAGE_TYPES = {"sd": "sd-plugin", "kb": "kb-plugin", "gs": "gs-plugin", "val": "val-plugin"}
PIN_TYPES = {"planner": "mrp-plan-plugin", **STAGE_TYPES}  # what each Pins field must name
PLAN_FIELDS = {
    "sd": "seedDetectorOrder",
    "kb": "kbPluginOrder",
    "gs": "goalSolverOrder",
    "val": "validatorOrder",
}
MAX_GUIDANCE = 32
MAX_SHARED_ITEMS = 50_000  # context items kept across turns (per kernel context)
TURN_UNIT_PREFIX = (
    "session::"  # DESIGN §3.3: units a turn's message contributes are `session::<turnId>::unit-NNN`
)
MAX_HISTORY = 8
CONFIDENCE_RANK = {"high": 3, "medium": 2, "low": 1}
EventHook = Callable[[dict[str, Any]], None]


def check_pins(ctx: KernelContext, pins: Pins, *, prefix: str = "") -> None:
    """Every pinned plugin is registered with its stage's type, else UnknownPluginError naming the
    stage and the plugins that would fit (`prefix` tells the user where the pin came from)."""
    for stage, plugin_type in PIN_TYPES.items():
        plugin_id = getattr(pins, stage)
        if plugin_id is None:
            continue
        entry = ctx.registry.get(plugin_id) if plugin_id in ctx.registry else None
        if entry is None or entry.type != plugin_type:
            known = ", ".join(e.id for e in ctx.registry.list(plugin_type)) or "none"
            raise UnknownPluginError(
                f"{prefix}no {plugin_type} '{plugin_id}' to pin for {stage} (known: {known})",
                {"stage": stage, "plugin": plugin_id},
            )


def intent_key(intent: IntentGroup) -> str:
    return f"{intent.act}|{' '.join(intent.intent.lower().split())}"


def units_key(units: list[KnowledgeUnit]) -> str:
    digest = hashlib.blake2s("\n".join(sorted(u.id for u in units)).encode(), digest_size=8)
    return digest.hexdigest()


def confidence_rank(value: str | None) -> float:
    if not value:
        return 0.0
    if value in CONFIDENCE_RANK:
        return float(CONFIDENCE_RANK[value])
    try:
        return 3.0 * float(value)
    except ValueError:
        return 0.0


@dataclass(slots=True)
class Attempt:
    """One plugin call as the stage logic sees it."""

    plugin_id: str
    type: str
    op: str
    status: str
    node: TraceNode
    doc: CnlDocument | None = None
    duration_ms: float = 0.0
    llm_calls: int = 0


@dataclass(slots=True)
class BranchRun:
    """One planner's attempt at a frame: the attempts it caused, for recordOutcome."""

    planner_id: str | None
    node: TraceNode
    frame_id: str
    attempts: list[OutcomeAttempt] = field(default_factory=list)
    status: str = "failed"
    duration_ms: float = 0.0


@dataclass(slots=True)
class View:
    """A knowledge view: what one kb-plugin (the first sufficient, or the best insufficient) selected."""

    plugin_id: str | None
    sufficient: bool
    evidence: list[KnowledgeUnit]
    guidance: list[KnowledgeUnit]
    resolved: ResolvedIntent | None
    node: TraceNode | None
    confidence: str | None = None

    @property
    def key(self) -> str:
        return units_key(self.evidence)


class TurnState:
    """What every frame of one request shares: ids, session, budget, trace, staged units, caches."""

    on_event: EventHook | None = None  # progress listener (the daemon's SSE); set by run_turn

    def __init__(
        self,
        ctx: KernelContext,
        *,
        request_id: str,
        message: str,
        session: SessionRecord,
        kb: KbRecord | None,
        pins: Pins,
        budget: RequestBudget,
        trace: TraceRecorder,
        session_units: list[KnowledgeUnit],
        history: list[str],
    ):
        self.ctx = ctx
        self.request_id = request_id
        self.message = message
        self.session = session
        self.kb = kb
        self.pins = pins
        self.preferences = session.preferences
        self.budget = budget
        self.trace = trace
        self.history = history
        static = _static(ctx)
        self.limiter = anyio.CapacityLimiter(static.max_parallel_seeds)
        self.session_units = session_units
        self.staged: list[KnowledgeUnit] = []
        self._staged_ids: set[str] = set()
        self.origin: dict[str, str] = {u.id: "session" for u in session_units}
        self.kb_guidance: list[KnowledgeUnit] = kb_guidance(ctx, kb.id if kb else None)
        self._kb_shape = kb_shape(ctx, kb.id if kb else None)
        self._profile: tuple[tuple[int, int], KnowledgeProfile] | None = None
        self.warnings: list[str] = []
        self.branches: list[BranchRun] = []
        self.plugin_ms = 0.0  # wall time with at least one plugin call in flight (overlaps counted once)
        self._in_flight = 0
        self._busy_since = 0.0
        self._items: dict[str, ContextItem] = {}
        self._static = static
        self._enabled = static.enabled
        self.descriptors: list[Descriptor] = static.descriptors
        self.memo: dict[tuple[str, ...], Attempt] = {}
        self._paths = static.paths.setdefault(kb.id if kb else None, {})
        self._planner_stats: list[PluginStats] | None = None
        # plugin id -> background calls (earlier turns' recordOutcome on this KB) pending when this turn
        # started: this turn waits for them before calling that plugin, as if they had run in sequence
        self._earlier = ctx.background.snapshot(self.kb_id)

    # ------------------------------------------------------------------ units

    @property
    def kb_id(self) -> str | None:
        return self.kb.id if self.kb else None

    def stage_units(self, units: list[KnowledgeUnit]) -> list[KnowledgeUnit]:
        """Stage current-turn units (pending until commit); returns the ones not staged before."""
        fresh = [u for u in units if u.id not in self._staged_ids and self.origin.get(u.id) != "session"]
        for unit in fresh:
            self._staged_ids.add(unit.id)
            self.origin[unit.id] = "current-turn"
        self.staged.extend(fresh)
        return fresh

    def visible_units(self) -> list[KnowledgeUnit]:
        """Current-turn (staged, every frame's) then committed session units."""
        return [*self.staged, *self.session_units]

    def context_items(self, units: list[KnowledgeUnit]) -> list[ContextItem]:
        """Units as request context items, each converted once per turn and, while the unit stays the
        same (the store hands a continuing session the same unit objects), once per kernel context."""
        items = self._items
        shared = self._static.items
        out = []
        for unit in units:
            item = items.get(unit.id)
            if item is None:
                hit = shared.get(unit.id)
                if hit is not None and (hit[0] is unit or hit[0] == unit):
                    item = hit[1]
                else:
                    if len(shared) >= MAX_SHARED_ITEMS:
                        shared.clear()
                    item = unit_to_context_item(unit)
                    shared[unit.id] = (unit, item)
                items[unit.id] = item
            out.append(item)
        return out

    def earlier_turn(self, unit: KnowledgeUnit) -> bool:
        """A unit an earlier turn's message contributed (committed current-turn unit, `session::<turn>::…`)."""
        return unit.id.startswith(TURN_UNIT_PREFIX) and self.origin.get(unit.id) == "session"

    def guidance(self, phases: tuple[str, ...], extra: list[KnowledgeUnit] = ()) -> list[KnowledgeUnit]:
        """KUs whose PhaseScopes name one of `phases`: current turn, session, KB, then `extra` (kb-returned).

        Guidance an earlier turn's message gave ("Answer yes or no.") shaped that turn's answers and is not
        applied again: session guidance comes from loaded context and the KB, not from old instructions.
        """
        out: dict[str, KnowledgeUnit] = {u.id: u for u in extra[:MAX_GUIDANCE] if not self.earlier_turn(u)}
        for unit in (*self.staged, *self.session_units, *self.kb_guidance):
            if self.earlier_turn(unit):
                continue
            if unit.id not in out and unit.phaseScopes and any(p in unit.phaseScopes for p in phases):
                out[unit.id] = unit
                if len(out) >= MAX_GUIDANCE:
                    break
        return list(out.values())

    def knowledge_profile(self) -> KnowledgeProfile:
        """Atomic units and symbolic facts (units with a Relation) in scope: structure only, never text."""
        key = (len(self.staged), len(self.session_units))
        if self._profile is None or self._profile[0] != key:
            atomic, facts = self._kb_shape
            for unit in self.visible_units():
                if unit.kuType == "atomic":
                    atomic += 1
                    facts += unit.relation is not None
            self._profile = (key, KnowledgeProfile(atomicUnits=atomic, symbolicFacts=facts))
        return self._profile[1]

    # ------------------------------------------------------------------ orders

    def enabled_ids(self, plugin_type: str) -> list[str]:
        return self._enabled.get(plugin_type, [])

    def stage_order(self, stage: str, plan: Plan | None) -> list[str]:
        """Candidates of a stage: explicit pin > the plan's order > preference first + configured default."""
        plugin_type = STAGE_TYPES[stage]
        pin = getattr(self.pins, stage)
        if pin:
            return [pin]
        cap = self._static.max_per_stage
        enabled = self.enabled_ids(plugin_type)
        planned = getattr(plan, PLAN_FIELDS[stage]) if plan is not None else ()
        order = [p for p in dict.fromkeys(planned) if p in enabled]
        if not order:
            default = self._static.default_orders[stage]
            preferred = getattr(self.preferences, stage)
            head = [preferred] if preferred else []
            order = [p for p in dict.fromkeys([*head, *default]) if p in enabled]
        return order[:cap]

    # ------------------------------------------------------------------ one call

    async def call(
        self,
        frame: ExecutionFrame,
        branch: BranchRun | None,
        plugin_id: str,
        op: str,
        prompt: str,
        units: list[KnowledgeUnit],
        payload: Any,
        *,
        parent: str,
        label: str = "",
        memo_key: tuple[str, ...] | None = None,
        intent_ref: str | None = None,
        input_summary: dict[str, Any] | None = None,
        early: Early | None = None,
        background: bool = False,
    ) -> Attempt:
        """Call a plugin through the supervisor, within budget, recording a trace node and the attempt.

        `early`: a call of this plugin with the same request already started ahead of its turn (see
        `Early`); its outcome is taken instead of calling again, recorded exactly like a call made here.
        `background`: a call the turn does not wait for (recordOutcome): its node is `pending` until it
        ends and it sends no progress events.
        """
        info = self._static.plugin(self.ctx, plugin_id)
        plugin_type = info.type
        summary = {"prompt": clip(prompt, PROMPT_PREVIEW), "context": len(units)}
        if input_summary:
            summary.update(input_summary)
        trace = self.trace
        node = trace.plugin_node(
            label,
            parent,
            frame.frame_id,
            plugin_id,
            plugin_type,
            op,
            summary,
        )
        attempt = Attempt(plugin_id, plugin_type, op, "error", node)
        if background:
            node.status = "pending"
        if memo_key is not None:
            cached = self.memo.get(memo_key)
            known = frame.failures.recall(memo_key)
            if known is not None:
                node.ref = f"{known[0]} in {known[1]}"
                trace.edge(known[1], node.id, "reuses")
                trace.finish(node, SKIPPED_KNOWN, reason=f"failed before on the same input ({known[0]})")
                node.durationMs = 0.0
                attempt.status = SKIPPED_KNOWN
                return attempt
            if cached is not None:
                node.ref = f"reuses {cached.node.id}"
                trace.edge(cached.node.id, node.id, "reuses")
                trace.finish(node, cached.status, **cached.node.output)
                node.durationMs = 0.0
                return Attempt(plugin_id, plugin_type, op, cached.status, node, cached.doc, 0.0, 0)
        budget = self.budget
        timeout_s = None
        if not budget.affords(info.max_llm_calls):
            reason = f"maxLLMCalls {info.max_llm_calls} exceeds the {budget.llm_calls_left} LLM calls left"
        else:
            timeout_s = budget.call_window_s(info.timeout_ms)
            reason = None if timeout_s is not None else "the request deadline has passed"
        if timeout_s is None:
            trace.finish(node, SKIPPED_BUDGET, reason=reason)
            node.durationMs = 0.0
            attempt.status = SKIPPED_BUDGET
            self._record(branch, attempt, frame, intent_ref)
            return attempt
        on_event = None if background else self.on_event
        if on_event is not None:
            self.emit(
                event="plugin-start",
                node=node.id,
                frameId=frame.frame_id,
                pluginId=plugin_id,
                type=plugin_type,
                op=op,
            )
        counted = 0  # LLM calls the bridge served this call (already charged to the request budget)
        failure: PluginCallError | None = None
        if early is not None:
            trace.backdate(node, early.started)
            result, failure = await early.outcome()
        else:
            if self._earlier and plugin_id in self._earlier:
                await self.after_earlier(plugin_id)
            llm = self.ctx.llm
            access = None
            if info.max_llm_calls > 0 and llm is not None and llm.available:
                # A fresh LLM token for this call only (None for plugins declaring no calls).
                access = grant(
                    llm,
                    info.entry,
                    op,
                    self.request_id,
                    frame.frame_id,
                    budget.llm_calls_left,
                    timeout_s,
                    node.id,
                )
            request = self.request(frame, plugin_id, op, prompt, units, payload, timeout_s, access)
            self._busy()
            try:
                try:
                    result = await self.ctx.supervisor.call(plugin_id, request, timeout_s=timeout_s)
                finally:  # revoke the token; one `llm` trace node per LLM call under this plugin node
                    self._idle()
                    if access is not None:
                        counted = settle(llm, access, trace, node, self.request_id)
            except PluginCallError as err:
                failure = err
        if failure is not None:
            attempt.llm_calls = counted
            error = failure.error
            detail: dict[str, Any] = {"code": error.code, "message": clip(error.message, 400)}
            if error.stderrTail:
                detail["stderrTail"] = clip(error.stderrTail, 400)
            if error.exitCode is not None:
                detail["exitCode"] = error.exitCode
            trace.finish(node, "error", **detail)
        else:
            doc = result.document
            attempt.doc = doc
            attempt.status = doc.result.status
            attempt.duration_ms = result.durationMs
            attempt.llm_calls = max(doc.result.llmCalls, counted)
            budget.charge(max(0, doc.result.llmCalls - counted))  # only calls the bridge did not see
            trace.complete(node, attempt.status, result.durationMs, summarize_output(doc))
        if on_event is not None and self.on_event is not None:
            self.emit(
                event="plugin-end",
                node=node.id,
                pluginId=plugin_id,
                op=op,
                status=node.status,
                durationMs=node.durationMs,
            )
        if memo_key is not None:
            if attempt.status in ("success", "insufficient") and attempt.doc is not None:
                self.memo[memo_key] = attempt
            elif attempt.status not in ("success", "accepted"):
                frame.failures.remember(memo_key, attempt.status, node.id)
        self._record(branch, attempt, frame, intent_ref)
        return attempt

    def request(
        self,
        frame: ExecutionFrame,
        plugin_id: str,
        op: str,
        prompt: str,
        units: list[KnowledgeUnit],
        payload: Any,
        timeout_s: float,
        access: Any = None,
    ) -> Request:
        return Request(
            prompt=prompt,
            context=self.context_items(units) if units else [],
            op=op,
            payload=payload,
            budget=Budget(llmCalls=self.budget.llm_calls_left, deadlineMs=max(1, int(timeout_s * 1000))),
            paths=self._artifacts(plugin_id),
            requestId=self.request_id,
            frameId=frame.frame_id,
            sessionId=self.session.id,
            llm=access,
        )

    async def after_earlier(self, plugin_id: str) -> None:
        """Wait for the background calls to `plugin_id` that were pending when this turn started."""
        jobs = self._earlier.pop(plugin_id, None)
        if jobs:
            await self.ctx.background.wait_for(jobs)

    def _busy(self) -> None:
        if self._in_flight == 0:
            self._busy_since = time.perf_counter()
        self._in_flight += 1

    def _idle(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self.plugin_ms += (time.perf_counter() - self._busy_since) * 1000.0

    def start_early(
        self,
        frame: ExecutionFrame,
        plugin_id: str,
        op: str,
        prompt: str,
        units: list[KnowledgeUnit],
        payload: Any,
        key: tuple[str, ...],
    ) -> Early | None:
        """Start a call ahead of its turn (to overlap another plugin's call), or None when that could
        change anything: only plugins that declare no LLM calls, while the deadline allows, and only if
        the result of the call with memo key `key` is not already known in this frame."""
        if key in self.memo or frame.failures.recall(key) is not None:
            return None
        info = self._static.plugin(self.ctx, plugin_id)
        if info.max_llm_calls > 0:
            return None
        timeout_s = self.budget.call_window_s(info.timeout_ms)
        if timeout_s is None:
            return None
        early = Early(
            self, plugin_id, self.request(frame, plugin_id, op, prompt, units, payload, timeout_s), timeout_s
        )
        early.key = key
        return early

    def fitting_early(
        self,
        early: Early | None,
        frame: ExecutionFrame,
        plugin_id: str,
        key: tuple[str, ...],
        payload: Any = None,
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
            or (units is not None and early.request.context != self.context_items(units))
            or key in self.memo
            or frame.failures.recall(key) is not None
        ):
            return None
        return early

    def emit(self, **event: Any) -> None:
        """Tell the progress listener (if any); a failing listener never breaks the turn."""
        if self.on_event is not None:
            try:
                self.on_event({"requestId": self.request_id, **event})
            except Exception:  # noqa: BLE001 - a listener's problem is not the turn's
                self.on_event = None

    def _artifacts(self, plugin_id: str) -> Paths:
        paths = self._paths.get(plugin_id)  # cached per kernel context and KB (see _static)
        if paths is None:
            paths = self._paths[plugin_id] = Paths(
                artifacts=str(self.ctx.artifacts_dir(self.kb_id, plugin_id))
            )
        return paths

    def planner_stats(self) -> list[PluginStats]:
        """Planner-level stats as planners see them (read once per turn)."""
        if self._planner_stats is None:
            self._planner_stats = [
                PluginStats(
                    pluginId=s.plannerId, successRate=s.successRate, latencyMs=s.latencyMs, samples=s.samples
                )
                for s in self.ctx.store.planner_stats().values()
            ]
        return self._planner_stats

    def _record(
        self, branch: BranchRun | None, attempt: Attempt, frame: ExecutionFrame, intent_ref: str | None
    ):
        if branch is None:
            return
        sufficient = None
        if attempt.doc is not None and attempt.doc.resolved:
            sufficient = attempt.doc.resolved[0].sufficient
        branch.attempts.append(
            OutcomeAttempt(
                pluginId=attempt.plugin_id,
                type=attempt.type,
                op=attempt.op,
                status=attempt.status,
                durationMs=round(attempt.duration_ms, 3),
                llmCalls=attempt.llm_calls,
                sufficient=sufficient,
                intentRef=intent_ref,
                frameId=frame.frame_id,
            )
        )

    # ------------------------------------------------------------------ stages

    async def build_plan(
        self,
        frame: ExecutionFrame,
        branch: BranchRun,
        phase: str,
        intents: list[IntentGroup],
    ) -> Plan | None:
        """`buildPlan` by the branch's planner; None (kernel defaults) when it has no usable plan."""
        if branch.planner_id is None:
            return None
        payload = BuildPlanPayload(
            phase=phase,
            intents=intents,
            guidance=self.guidance(("mrp-plan-plugin", "frame")),
            descriptors=self.descriptors,
            pins=self.pins,
            preferences=self.preferences,
            stats=self.planner_stats(),
            depth=frame.depth,
            maxDepth=frame.max_depth,
            failures=frame.failures.notes(),
            llmCallsLeft=self.budget.llm_calls_left,
            knowledge=self.knowledge_profile(),
        )
        prompt = frame.prompt
        attempt = await self.call(
            frame,
            branch,
            branch.planner_id,
            "buildPlan",
            prompt,
            [],
            payload,
            parent=branch.node.id,
            label=f"plan {phase}",
            input_summary={"phase": phase, "intents": len(intents)},
        )
        if attempt.status == "success" and attempt.doc is not None and attempt.doc.plan is not None:
            return attempt.doc.plan
        return None

    def seed_payload(self, frame: ExecutionFrame) -> tuple[str, DetectSeedsPayload, list[KnowledgeUnit]]:
        """(mode, payload, guidance) of a frame's detectSeeds calls: independent of the plan."""
        mode = "decompose" if frame.purpose == "decompose" else "turn"
        payload = DetectSeedsPayload(
            turnId=self.request_id,
            mode=mode,
            parentIntent=frame.parent_intent,
            history=self.history[-MAX_HISTORY:],
        )
        return mode, payload, self.guidance(("sd-plugin",))

    def early_seeds(self, frame: ExecutionFrame, plugin_id: str) -> Early | None:
        """Start `plugin_id`'s detectSeeds now (while the planner plans), unless its result is already
        known in this frame (memo or failure memory) or the call may use the LLM."""
        mode, payload, guidance = self.seed_payload(frame)
        key = ("sd", plugin_id, mode, frame.prompt)
        return self.start_early(frame, plugin_id, "detectSeeds", frame.prompt, guidance, payload, key)

    async def detect_seeds(
        self, frame: ExecutionFrame, branch: BranchRun, order: list[str], early: Early | None = None
    ) -> tuple[Attempt | None, list[Attempt]]:
        """sd candidates in order until one returns valid CNL with intents or units.

        `early`: a detectSeeds already started (`early_seeds`), used when its plugin's turn comes (the
        caller records it as unused otherwise)."""
        mode, payload, guidance = self.seed_payload(frame)
        tried: list[Attempt] = []
        previous: str | None = None
        found: Attempt | None = None
        for plugin_id in order:
            key = ("sd", plugin_id, mode, frame.prompt)
            use = self.fitting_early(early, frame, plugin_id, key, units=guidance)
            attempt = await self.call(
                frame,
                branch,
                plugin_id,
                "detectSeeds",
                frame.prompt,
                guidance,
                payload,
                parent=branch.node.id,
                label=f"detect seeds ({mode})",
                memo_key=key,
                input_summary={"mode": mode},
                early=use,
            )
            self.trace.edge(previous, attempt.node.id, "next-candidate")
            previous = attempt.node.id
            tried.append(attempt)
            doc = attempt.doc
            if attempt.status == "success" and doc is not None and (doc.intents or doc.units):
                found = attempt
                break
        return found, tried

    async def notify_kb(
        self, frame: ExecutionFrame, parent: str, event: str, scope: str, units: list[KnowledgeUnit]
    ):
        """Tell every enabled kb-plugin about session units (added / committed / discarded), in parallel."""
        await run_all(self.kb_notifications(frame, parent, event, scope, units), self.ctx.supervisor)

    def kb_notifications(
        self, frame: ExecutionFrame, parent: str, event: str, scope: str, units: list[KnowledgeUnit]
    ) -> list[Callable[[], Awaitable[Any]]]:
        """One `onSessionEvent` call per enabled kb-plugin, not started (for `run_all` with other calls)."""
        targets = self.enabled_ids("kb-plugin")
        if not targets or not units:
            return []
        payload = OnSessionEventPayload(event=event, scope=scope, turnId=self.request_id, units=units)
        prompt = f"Session {self.session.id}: {event} ({scope}, {len(units)} units)"
        label = f"{event} ({len(units)} units)"

        def one(plugin_id: str) -> Callable[[], Awaitable[Any]]:
            return lambda: self.call(
                frame,
                None,
                plugin_id,
                "onSessionEvent",
                prompt,
                [],
                payload,
                parent=parent,
                label=label,
                input_summary={"event": event, "scope": scope, "units": len(units)},
            )

        return [one(plugin_id) for plugin_id in targets]

    def early_retrieve(self, frame: ExecutionFrame, intent: IntentGroup, plugin_id: str) -> Early | None:
        """Start `plugin_id`'s retrieve for `intent` now (what `next_view` would send as its first call),
        unless its result is already known in this frame or the call may use the LLM."""
        key = ("kb", plugin_id, intent_key(intent), str(len(self.staged)))
        if key in self.memo or frame.failures.recall(key) is not None:
            return None  # before building the payload
        units = self.visible_units()
        payload = RetrievePayload(intents=[intent], units=units, kbId=self.kb_id, purpose="task-evidence")
        return self.start_early(frame, plugin_id, "retrieve", intent.intent, units, payload, key)

    async def next_view(
        self,
        frame: ExecutionFrame,
        branch: BranchRun,
        intent: IntentGroup,
        order: list[str],
        cursor: list[int],
        parent: str,
        previous: list[str | None],
        *,
        ref: str | None = None,
        early: Early | None = None,
    ) -> View | None:
        """kb candidates from `cursor[0]` on until one is sufficient; else the best insufficient view.

        Returns None when no candidate is left to try. `previous[0]` threads the next-candidate chain.
        `early`: a retrieve already started (`early_retrieve`), used if it is exactly a call made here.
        """
        if cursor[0] >= len(order):
            return None
        units = self.visible_units()
        payload = RetrievePayload(intents=[intent], units=units, kbId=self.kb_id, purpose="task-evidence")
        best: View | None = None
        best_rank: tuple[float, ...] = ()
        while cursor[0] < len(order):
            plugin_id = order[cursor[0]]
            cursor[0] += 1
            key = ("kb", plugin_id, intent_key(intent), str(len(self.staged)))
            use = self.fitting_early(early, frame, plugin_id, key)
            attempt = await self.call(
                frame,
                branch,
                plugin_id,
                "retrieve",
                intent.intent,
                units,
                payload,
                parent=parent,
                label=f"retrieve {(ref or intent.ref)}",
                memo_key=key,
                intent_ref=(ref or intent.ref),
                input_summary={"units": len(units), "kbId": self.kb_id},
                early=use,
            )
            self.trace.edge(previous[0], attempt.node.id, "next-candidate")
            previous[0] = attempt.node.id
            view = view_of(attempt)
            if view is None:
                continue
            if view.sufficient:
                return view
            rank = (len(view.evidence), confidence_rank(view.confidence))
            if best is None or rank > best_rank:
                best, best_rank = view, rank
        if best is not None:
            best.node.output = {**best.node.output, "keptAsBestInsufficient": True}
        return best

    def solve_payload(self, intent: IntentGroup, view: View, allow_decompose: bool) -> SolvePayload:
        return SolvePayload(
            intent=intent,
            evidence=view.evidence,
            guidance=self.guidance(("gs-plugin",), view.guidance),
            resolved=view.resolved,
            allowDecompose=allow_decompose,
        )

    def early_solve(self, frame: ExecutionFrame, intent: IntentGroup, retrieve: Early, plugin_id: str):
        """Start `plugin_id`'s solve on the view an early retrieve just returned (while the planner still
        plans post-seed): what `solve` would send if the plan starts with that kb- and gs-plugin and the
        view is sufficient. None when the view is not sufficient, the result is already known in this
        frame, or the call may use the LLM. Used only if `solve` is about to send exactly this request."""
        result = retrieve.result
        if result is None or retrieve.key is None:
            return None
        doc = result.document
        view = view_from(retrieve.plugin_id, doc.result.status, doc, None)
        if view is None or not view.sufficient:
            return None
        key = ("gs", plugin_id, intent_key(intent), view.key)
        payload = self.solve_payload(intent, view, frame.can_open_child)
        return self.start_early(frame, plugin_id, "solve", intent.intent, view.evidence, payload, key)

    async def solve(
        self,
        frame: ExecutionFrame,
        branch: BranchRun,
        plugin_id: str,
        intent: IntentGroup,
        view: View,
        parent: str,
        allow_decompose: bool,
        *,
        ref: str | None = None,
        early: Early | None = None,
    ) -> Attempt:
        """`early`: a solve already started (`early_solve`), used if it is exactly the call made here."""
        payload = self.solve_payload(intent, view, allow_decompose)
        guidance = payload.guidance
        memo_key = ("gs", plugin_id, intent_key(intent), view.key)
        early = self.fitting_early(early, frame, plugin_id, memo_key, payload)
        return await self.call(
            frame,
            branch,
            plugin_id,
            "solve",
            intent.intent,
            view.evidence,
            payload,
            parent=parent,
            label=f"solve {(ref or intent.ref)}",
            memo_key=memo_key,
            intent_ref=(ref or intent.ref),
            input_summary={
                "evidence": len(view.evidence),
                "guidance": [u.id for u in guidance][:MAX_GUIDANCE],
            },
            early=early,
        )

    async def validate(
        self,
        frame: ExecutionFrame,
        branch: BranchRun,
        order: list[str],
        intent: IntentGroup,
        answer: Attempt,
        view: View,
        *,
        ref: str | None = None,
    ) -> tuple[str, list[str], str | None]:
        """Validators in order. Returns (verdict, warnings, rejecting node id).

        verdict: `rejected` (one rejected: VALIDATION_REJECTED), `accepted` (at least one accepted, none
        rejected) or `unvalidated` (none could judge: unsupported, skipped or error; errors warn).
        """
        doc = answer.doc
        assert doc is not None
        guidance = self.guidance(("val-plugin",))
        payload = ValidatePayload(
            intent=intent,
            answer=doc.answer or "",
            sources=list(doc.sources or []),
            evidence=view.evidence,
            guidance=guidance,
        )
        verdict, warnings = "unvalidated", []
        previous = None
        for plugin_id in order:
            attempt = await self.call(
                frame,
                branch,
                plugin_id,
                "validate",
                intent.intent,
                view.evidence,
                payload,
                parent=answer.node.id,
                label=f"validate {(ref or intent.ref)} answer of {answer.plugin_id}",
                intent_ref=(ref or intent.ref),
                input_summary={"answerFrom": answer.plugin_id, "guidance": [u.id for u in guidance]},
            )
            self.trace.edge(attempt.node.id, answer.node.id, "validates")
            self.trace.edge(previous, attempt.node.id, "next-candidate")
            previous = attempt.node.id
            if attempt.status == "rejected":
                reason = attempt.doc.result.result if attempt.doc else ""
                attempt.node.output = {**attempt.node.output, "code": "VALIDATION_REJECTED"}
                warnings.append(
                    f"{plugin_id} rejected the answer of {answer.plugin_id}: {reason}".rstrip(": ")
                )
                return "rejected", warnings, attempt.node.id
            if attempt.status == "accepted":
                verdict = "accepted"
            elif attempt.status == "error":
                code = attempt.node.output.get("code") or (attempt.doc.result.code if attempt.doc else None)
                warnings.append(
                    f"validator {plugin_id} failed ({code or 'error'}); the answer is not validated by it"
                )
        return verdict, warnings, None


def view_of(attempt: Attempt) -> View | None:
    """The view a retrieve attempt yields, or None when it failed."""
    return view_from(attempt.plugin_id, attempt.status, attempt.doc, attempt.node)


def view_from(plugin_id: str, status: str, doc: CnlDocument | None, node: TraceNode | None) -> View | None:
    """The view a retrieve reply (`doc` with `status`) yields, or None when it failed."""
    if doc is None or status not in ("success", "insufficient"):
        return None
    resolved = doc.resolved[0] if doc.resolved else None
    by_id = {u.id: u for u in doc.units}
    if resolved is not None and resolved.selected:
        evidence = [by_id[i] for i in resolved.selected if i in by_id]
    else:
        guidance_ids = set(resolved.guidance) if resolved else set()
        evidence = [u for u in doc.units if u.id not in guidance_ids]
    guidance = [by_id[i] for i in (resolved.guidance if resolved else []) if i in by_id]
    sufficient = status == "success" and (resolved.sufficient if resolved is not None else bool(evidence))
    return View(
        plugin_id=plugin_id,
        sufficient=sufficient,
        evidence=evidence,
        guidance=guidance,
        resolved=resolved,
        node=node,
        confidence=doc.result.confidence,
    )


def empty_view() -> View:
    return View(plugin_id=None, sufficient=False, evidence=[], guidance=[], resolved=None, node=None)


# --------------------------------------------------------------------------- per-context caches


class _PluginInfo:
    """What a plugin call needs from the registry and config, resolved once per kernel context."""

    __slots__ = ("entry", "type", "max_llm_calls", "timeout_ms")

    def __init__(self, entry: Any, limit_ms: int):
        manifest = entry.manifest
        self.entry = entry
        self.type: str = entry.type
        self.max_llm_calls: int = manifest.maxLLMCalls
        self.timeout_ms: int = min(manifest.timeoutMs, limit_ms)


class _Static:
    """Per kernel context: enabled ids per type, descriptors, limits, default orders, plugin infos and
    artifact paths (the registry and config do not change while a context is open)."""

    __slots__ = (
        "enabled",
        "descriptors",
        "max_parallel_seeds",
        "max_per_stage",
        "default_orders",
        "plugin_timeout_ms",
        "plugins",
        "paths",
        "items",
    )

    def __init__(self, ctx: KernelContext):
        types = [*STAGE_TYPES.values(), "mrp-plan-plugin"]
        self.enabled: dict[str, list[str]] = {t: [e.id for e in ctx.enabled(t)] for t in types}
        self.descriptors = descriptors(ctx)
        budget = ctx.config.engine.budget
        self.max_parallel_seeds: int = budget.maxParallelSeeds
        self.max_per_stage: int = budget.maxPluginsPerStage
        orders = ctx.config.plugins.stageOrders
        self.default_orders: dict[str, list[str]] = {s: list(getattr(orders, s)) for s in STAGE_TYPES}
        self.plugin_timeout_ms: int = ctx.config.engine.limits.pluginTimeoutMs
        self.plugins: dict[str, _PluginInfo] = {}
        self.paths: dict[str | None, dict[str, Paths]] = {}
        self.items: dict[str, tuple[KnowledgeUnit, ContextItem]] = {}

    def plugin(self, ctx: KernelContext, plugin_id: str) -> _PluginInfo:
        info = self.plugins.get(plugin_id)
        if info is None:
            info = self.plugins[plugin_id] = _PluginInfo(ctx.registry.get(plugin_id), self.plugin_timeout_ms)
        return info


def _static(ctx: KernelContext) -> _Static:
    static = ctx.state.get("turn_static")
    if static is None:
        static = ctx.state["turn_static"] = _Static(ctx)
    return static


def descriptors(ctx: KernelContext) -> list[Descriptor]:
    cached = ctx.state.get("descriptors")
    if cached is None:
        cached = ctx.state["descriptors"] = [
            e.manifest.descriptor() for t in STAGE_TYPES.values() for e in ctx.enabled(t)
        ]
    return cached


def _kb_scan(ctx: KernelContext, kb_id: str) -> tuple[list[KnowledgeUnit], int, int]:
    """One pass over a KB's units (cached per KB content version): guidance units, atomic units, facts."""
    version = tuple((s.id, s.hash) for s in ctx.store.list_sources(kb_id))
    cache = ctx.state.setdefault("kb_guidance", {})
    hit = cache.get(kb_id)
    if hit is not None and hit[0] == version:
        return hit[1]
    guidance: list[KnowledgeUnit] = []
    atomic = facts = 0
    for unit in ctx.store.kb_units(kb_id):
        if any(p != "kb-plugin" for p in unit.phaseScopes):
            guidance.append(unit)
        if unit.kuType == "atomic":
            atomic += 1
            facts += unit.relation is not None
    cache[kb_id] = (version, (guidance, atomic, facts))
    return guidance, atomic, facts


def kb_guidance(ctx: KernelContext, kb_id: str | None) -> list[KnowledgeUnit]:
    """KB units scoped to some phase other than kb-plugin (cached per KB content version)."""
    return _kb_scan(ctx, kb_id)[0] if kb_id is not None else []


def kb_shape(ctx: KernelContext, kb_id: str | None) -> tuple[int, int]:
    """(atomic units, units with a symbolic triple) of the mounted KB (same cached pass)."""
    if kb_id is None:
        return 0, 0
    _, atomic, facts = _kb_scan(ctx, kb_id)
    return atomic, facts
