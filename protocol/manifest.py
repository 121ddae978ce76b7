"""Plugin manifests (SPEC.md §7): the descriptor plus how to start the process.

Every rule a manifest must meet on its own is a msgspec constraint here, so `schema/manifest.schema.json`
(generated from these Structs) carries it and a foreign author's JSON Schema validator agrees with the
kernel: the type picks the variant (`type` is the tag), sd, kb and gs plugins must give plannerHints,
each variant lists only its type's ops, limits are positive, ranges and enums are closed. What depends
on the machine (the command on PATH, paths inside the plugin folder, the allowlist) is the registry's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from .envelope import Descriptor, PlannerHints
from .vocab import OPS_BY_TYPE, CostClass, GsOp, KbOp, PlanOp, PluginType, SdOp, ValOp

DEFAULT_MAX_INPUT_BYTES = 1 << 20
DEFAULT_MAX_OUTPUT_BYTES = 16 << 20

PluginId = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="Letters, digits, '.', '_' and '-' (at most 64, not starting with a symbol); "
        "it names the plugin's artifact folder.",
    ),
]
Command = Annotated[
    str,
    Meta(
        pattern=r"\S",
        description='"python" means the kernel\'s own interpreter; a path must stay inside the manifest '
        "folder; otherwise a program on PATH.",
    ),
]
Positive = Annotated[int, Meta(gt=0)]
OPS_DOC = "The ops it implements, each an op of its type (at least one); absent: every op of its type."


def _ops(plugin_type: str) -> list:
    return msgspec.field(default_factory=lambda: list(OPS_BY_TYPE[plugin_type]))


class ManifestBase(
    msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=False, tag_field="type"
):
    """The fields every plugin type shares; `type` (the tag) selects the variant below."""

    id: PluginId
    command: Command
    name: str = ""
    version: str = "0.0.0"
    protocolVersion: Literal[1] = 1
    description: str = ""
    costClass: CostClass = "moderate"
    usesLLM: bool = False
    maxLLMCalls: Annotated[int, Meta(ge=0)] = 0
    modelRoles: list[str] = []
    timeoutMs: Positive = 15000
    maxInputSizeBytes: Positive = DEFAULT_MAX_INPUT_BYTES
    maxOutputBytes: Positive = DEFAULT_MAX_OUTPUT_BYTES
    plannerHints: PlannerHints | None = None
    provides: list[str] = []
    accepts: list[str] = []
    args: list[str] = []
    worker: bool = False
    concurrency: Positive = 1
    ops: Sequence[str] = ()  # narrowed by each variant to its type's ops
    tags: list[str] = []

    @property
    def type(self) -> PluginType:
        return self.__struct_config__.tag  # type: ignore[return-value]  # the tag is one of PluginType

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


class SdManifest(ManifestBase, tag="sd-plugin"):
    plannerHints: PlannerHints
    ops: Annotated[list[SdOp], Meta(min_length=1, description=OPS_DOC)] = _ops("sd-plugin")


class PlanManifest(ManifestBase, tag="mrp-plan-plugin"):
    ops: Annotated[list[PlanOp], Meta(min_length=1, description=OPS_DOC)] = _ops("mrp-plan-plugin")


class KbManifest(ManifestBase, tag="kb-plugin"):
    plannerHints: PlannerHints
    ops: Annotated[list[KbOp], Meta(min_length=1, description=OPS_DOC)] = _ops("kb-plugin")


class GsManifest(ManifestBase, tag="gs-plugin"):
    plannerHints: PlannerHints
    ops: Annotated[list[GsOp], Meta(min_length=1, description=OPS_DOC)] = _ops("gs-plugin")


class ValManifest(ManifestBase, tag="val-plugin"):
    ops: Annotated[list[ValOp], Meta(min_length=1, description=OPS_DOC)] = _ops("val-plugin")


# `manifests/<id>.json` or `wrappers/<name>/manifest.json`: decode with `msgspec.convert(data, Manifest)`.
Manifest = SdManifest | PlanManifest | KbManifest | GsManifest | ValManifest
MANIFEST_TYPES: tuple[type[ManifestBase], ...] = (
    SdManifest,
    PlanManifest,
    KbManifest,
    GsManifest,
    ValManifest,
)
