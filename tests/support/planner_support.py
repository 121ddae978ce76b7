"""What the planner tests share: the real manifests' descriptors, the kernel's store as the planners'
memory (one per folder, a KB scope), and buildPlan/recordOutcome called through the plugin's request
path."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.store import Store
from mrpvm.plugins.planner_default.__main__ import plugin as default_planner
from mrpvm.protocol.document import IntentGroup, Plan
from mrpvm.protocol.envelope import (
    BuildPlanPayload,
    OutcomeAttempt,
    Paths,
    PlannerHints,
    RecordOutcomePayload,
    Request,
    encode_request,
)

DESCRIPTORS = [e.manifest.descriptor() for e in Registry.load(MANIFESTS_DIR).list()]


def intent(act: str, text: str, index: int = 1) -> IntentGroup:
    return IntentGroup(index=index, act=act, intent=text, output="an answer")


@pytest.fixture(autouse=True)
def _close_stores():
    yield
    while STORES:
        STORES.popitem()[1].close()


STORES: dict[str, Store] = {}


def store_at(folder) -> Store:
    """The kernel's side of learning for these plugin-level tests: one store per `folder` (a KB scope)."""
    key = str(folder)
    if key not in STORES:
        Path(folder).mkdir(parents=True, exist_ok=True)
        STORES[key] = Store(Path(folder) / "mrpvm.db")
    return STORES[key]


def table_of(folder) -> dict:
    """The planner's records at `folder` as {"plugins": {id: {"overall": {...}, "acts": {task: {...}}}}}."""
    plugins: dict = {}
    for stat in store_at(folder).learned(default_planner.id, None):
        record = plugins.setdefault(stat.pluginId, {"overall": None, "acts": {}})
        data = msgspec.to_builtins(stat) | {"samples": stat.samples}
        if stat.task:
            record["acts"][stat.task] = data
        else:
            record["overall"] = data
    return {"plugins": plugins}


def plan_of(planner, intents, *, artifacts=None, prompt="question", **fields) -> Plan:
    fields.setdefault("descriptors", DESCRIPTORS)
    if artifacts is not None:
        fields.setdefault("learned", store_at(artifacts).learned(planner.id, None))
    payload = BuildPlanPayload(phase=fields.pop("phase", "post-seed"), intents=intents, **fields)
    request = Request(
        prompt=prompt,
        context=[],
        op="buildPlan",
        payload=payload,
        paths=Paths(artifacts=str(artifacts) if artifacts else None),
    )
    doc, failure, code = planner.run(encode_request(request))
    assert failure is None and code == 0 and doc.result.status == "success"
    return doc.plan


def record(planner, artifacts, attempts, intents):
    payload = RecordOutcomePayload(requestId="r", plannerId=planner.id, attempts=attempts, intents=intents)
    request = Request(
        prompt="outcome",
        context=[],
        op="recordOutcome",
        payload=payload,
        paths=Paths(artifacts=str(artifacts)),
    )
    doc, failure, _ = planner.run(encode_request(request))
    assert failure is None and doc.result.status == "success"
    store_at(artifacts).record_observations(planner.id, None, doc.observations)
    return doc


def kb_attempt(plugin_id: str, status: str, sufficient: bool | None, ms: float = 10.0) -> OutcomeAttempt:
    return OutcomeAttempt(
        pluginId=plugin_id,
        type="kb-plugin",
        op="retrieve",
        status=status,
        durationMs=ms,
        sufficient=sufficient,
        intentRef="intent-1",
    )


def hints(**changes) -> PlannerHints:
    """The planner hints of a test kb-plugin: a moderately cheap lexical specialist for `explain`."""
    fields: dict = dict(
        expectedLatencyMs=40,
        expectedLLMCalls=0,
        relativeCost=0.6,
        supportedActs=["explain"],
        topicTags=[],
        preferredDepth="medium",
        fallbackRole="specialist",
        evidenceStyle=["lexical"],
        confidenceWhenMatched=0.6,
    )
    return PlannerHints(**(fields | changes))
