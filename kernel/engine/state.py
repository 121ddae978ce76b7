"""What every frame of one request shares (docs/ARCHITECTURE.md §4): `TurnState`, plus per-context caches.

The turn state holds the ids, session, budget, trace, the units staged by this turn, the warnings, the
planner branches run so far, and the call bookkeeping (`calls`: memo, in-flight time; see calls.py).
What does not change while a kernel context is open (enabled plugins, descriptors, limits, default
orders) is resolved once per context (`Static`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit, Plan
from mrpvm.protocol.envelope import (
    ContextItem,
    Descriptor,
    KnowledgeProfile,
    LearnedStat,
    Paths,
    Pins,
    PluginStats,
    unit_to_context_item,
)

from ..budgets import RequestBudget
from ..errors import UnknownPluginError
from ..trace import TraceRecorder
from .scope import EventHook, PluginInfo, TurnCalls
from .store_calls import store_call

if TYPE_CHECKING:
    from ..context import KernelContext
    from ..llm import LLMBridge
    from ..records import KbRecord, SessionRecord
    from ..supervisor import Supervisor
    from .scope import BranchRun

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
# protocol/SPEC.md §6.3: units a turn's message contributes are `session::<turnId>::unit-NNN`
TURN_UNIT_PREFIX = "session::"
MAX_HISTORY = 8


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
        deliberation: int = 0,
    ):
        self.ctx = ctx
        self.deliberation = deliberation  # comparative deliberation level (deliberation.py)
        self.request_id = request_id
        self.message = message
        self.session = session
        self.kb = kb
        self.pins = pins
        self.preferences = session.preferences
        self.budget = budget
        self.trace = trace
        self.history = history
        self.static = static = static_of(ctx)
        self.limiter = anyio.CapacityLimiter(static.max_parallel_seeds)
        self.session_units = session_units
        self.staged: list[KnowledgeUnit] = []
        self._staged_ids: set[str] = set()
        self.origin: dict[str, str] = {u.id: "session" for u in session_units}
        # one read of the KB's source versions a turn (the scan itself is cached across turns)
        guidance, atomic, facts = _kb_scan(ctx, self.kb_id) if self.kb_id is not None else ([], 0, 0)
        self.kb_guidance: list[KnowledgeUnit] = guidance
        self._kb_shape = (atomic, facts)
        self._profile: tuple[tuple[int, int], KnowledgeProfile] | None = None
        self.warnings: list[str] = []
        # plugin id → "op: CODE: message" of its first failed call (crash, invalid CNL, timeout, ...)
        self.plugin_failures: dict[str, str] = {}
        self.branches: list[BranchRun] = []
        self._items: dict[str, ContextItem] = {}
        self.descriptors: list[Descriptor] = static.descriptors
        self.artifact_paths: dict[str, Paths] = static.paths.setdefault(self.kb_id, {})
        self._planner_stats: list[PluginStats] | None = None
        self._learned: dict[str, list[LearnedStat]] = {}
        self.calls = TurnCalls(ctx.background, ctx.background.snapshot(self.kb_id, session.id))

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
        shared = self.static.items
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

    def guidance(self, phases: tuple[str, ...], extra: Sequence[KnowledgeUnit] = ()) -> list[KnowledgeUnit]:
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
        return self.static.enabled.get(plugin_type, [])

    def stage_order(self, stage: str, plan: Plan | None) -> list[str]:
        """Candidates of a stage: explicit pin > the plan's order > preference first + configured default."""
        plugin_type = STAGE_TYPES[stage]
        pin = getattr(self.pins, stage)
        if pin:
            return [pin]
        enabled = self.enabled_ids(plugin_type)
        planned = getattr(plan, PLAN_FIELDS[stage]) if plan is not None else ()
        order = [p for p in dict.fromkeys(planned) if p in enabled]
        if not order:
            default = self.static.default_orders[stage]
            preferred = getattr(self.preferences, stage)
            head = [preferred] if preferred else []
            order = [p for p in dict.fromkeys([*head, *default]) if p in enabled]
        return order[: self.static.max_per_stage]

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

    async def learned(self, planner_id: str) -> list[LearnedStat]:
        """What the planner has learned about the descriptors' plugins in this KB's scope, on every node
        (kernel/store_learning.py); read once per turn and planner (store_calls.py: off the event loop
        on PostgreSQL, where it is a server round trip)."""
        hit = self._learned.get(planner_id)
        if hit is None:
            ids = [d.id for d in self.descriptors]
            read = self.ctx.store.learned
            hit = await store_call(self.ctx.store, read, planner_id, self.kb_id, ids)
            self._learned[planner_id] = hit
        return hit

    # ------------------------------------------------------------------ the call scope (calls.CallScope)

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def supervisor(self) -> Supervisor:
        return self.ctx.supervisor

    @property
    def llm(self) -> LLMBridge | None:
        return self.ctx.llm

    def plugin_info(self, plugin_id: str) -> PluginInfo:
        return self.static.plugin(self.ctx, plugin_id)

    def artifact_path(self, plugin_id: str) -> Paths:
        """The plugin's artifacts folder for the mounted KB (cached per kernel context and KB)."""
        paths = self.artifact_paths
        hit = paths.get(plugin_id)
        if hit is None:
            hit = paths[plugin_id] = Paths(artifacts=str(self.ctx.artifacts_dir(self.kb_id, plugin_id)))
        return hit

    def emit(self, **event: Any) -> None:
        """Tell the progress listener (if any); a failing listener never breaks the turn."""
        if self.on_event is not None:
            try:
                self.on_event({"requestId": self.request_id, **event})
            except Exception:  # noqa: BLE001 - a listener's problem is not the turn's
                self.on_event = None


# --------------------------------------------------------------------------- per-context caches


class Static:
    """Per kernel context: enabled ids per type, descriptors, limits, default orders, plugin infos and
    artifact paths (the registry and config do not change while a context is open)."""

    __slots__ = (
        "enabled",
        "llm_idle",
        "descriptors",
        "max_parallel_seeds",
        "max_per_stage",
        "default_orders",
        "plugin_timeout_ms",
        "plugins",
        "paths",
        "items",
        "kb_scans",
        "sd_first",
        "__weakref__",
    )

    def __init__(self, ctx: KernelContext):
        types = [*STAGE_TYPES.values(), "mrp-plan-plugin"]
        self.llm_idle: list[str] = ctx.llm_idle()  # not planned: no LLM (KernelContext.llm_idle)
        idle = set(self.llm_idle)
        self.enabled: dict[str, list[str]] = {
            t: [e.id for e in ctx.enabled(t) if e.id not in idle] for t in types
        }
        self.descriptors: list[Descriptor] = [
            e.manifest.descriptor() for t in STAGE_TYPES.values() for e in ctx.enabled(t) if e.id not in idle
        ]
        budget = ctx.config.engine.budget
        self.max_parallel_seeds: int = budget.maxParallelSeeds
        self.max_per_stage: int = budget.maxPluginsPerStage
        orders = ctx.config.plugins.stageOrders
        self.default_orders: dict[str, list[str]] = {s: list(getattr(orders, s)) for s in STAGE_TYPES}
        self.plugin_timeout_ms: int = ctx.config.engine.limits.pluginTimeoutMs
        self.plugins: dict[str, PluginInfo] = {}
        self.paths: dict[str | None, dict[str, Paths]] = {}
        self.items: dict[str, tuple[KnowledgeUnit, ContextItem]] = {}
        # kb id -> (its sources' (id, hash), (guidance units, atomic units, facts)): see _kb_scan
        self.kb_scans: dict[str, tuple[tuple[tuple[str, str], ...], KbScan]] = {}
        # planner id -> the sd-plugin its last pre-seed plan put first (early.start_early_seeds' guess)
        self.sd_first: dict[str | None, str] = {}

    def plugin(self, ctx: KernelContext, plugin_id: str) -> PluginInfo:
        info = self.plugins.get(plugin_id)
        if info is None:
            info = self.plugins[plugin_id] = PluginInfo(ctx.registry.get(plugin_id), self.plugin_timeout_ms)
        return info


# One Static per open kernel context, dropped with it (the context knows nothing of the engine).
_STATICS: weakref.WeakKeyDictionary[KernelContext, Static] = weakref.WeakKeyDictionary()


def static_of(ctx: KernelContext) -> Static:
    static = _STATICS.get(ctx)
    if static is None:
        static = _STATICS[ctx] = Static(ctx)
    return static


KbScan = tuple[list[KnowledgeUnit], int, int]


def _kb_scan(ctx: KernelContext, kb_id: str) -> KbScan:
    """One pass over a KB's units (cached per KB content version): guidance units, atomic units, facts."""
    version = tuple((s.id, s.hash) for s in ctx.store.list_sources(kb_id))
    cache = static_of(ctx).kb_scans
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
