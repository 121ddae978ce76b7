"""Plugin manifests (DS016 + DS003): the descriptor plus how to start the process."""

from __future__ import annotations

import msgspec

from .envelope import Descriptor, PlannerHints
from .vocab import CostClass, Op, PluginType

DEFAULT_MAX_INPUT_BYTES = 1 << 20
DEFAULT_MAX_OUTPUT_BYTES = 16 << 20


class Manifest(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=False):
    """`manifests/<id>.json` or `wrappers/<name>/manifest.json`."""

    id: str
    type: PluginType
    command: str
    name: str = ""
    version: str = "0.0.0"
    protocolVersion: int = 1
    description: str = ""
    costClass: CostClass = "moderate"
    usesLLM: bool = False
    maxLLMCalls: int = 0
    modelRoles: list[str] = []
    timeoutMs: int = 15000
    maxInputSizeBytes: int = DEFAULT_MAX_INPUT_BYTES
    maxOutputBytes: int = DEFAULT_MAX_OUTPUT_BYTES
    plannerHints: PlannerHints | None = None
    provides: list[str] = []
    accepts: list[str] = []
    args: list[str] = []
    worker: bool = False
    concurrency: int = 1
    ops: list[Op] = []
    tags: list[str] = []

    def descriptor(self) -> Descriptor:
        return Descriptor(
            id=self.id,
            type=self.type,
            name=self.name,
            version=self.version,
            description=self.description,
            costClass=self.costClass,
            usesLLM=self.usesLLM,
            maxLLMCalls=self.maxLLMCalls,
            modelRoles=self.modelRoles,
            timeoutMs=self.timeoutMs,
            plannerHints=self.plannerHints,
            provides=self.provides,
            accepts=self.accepts,
            ops=list(self.ops),
            tags=self.tags,
        )
