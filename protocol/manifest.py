"""Plugin manifests (SPEC.md §7): the descriptor plus how to start the process.

Every rule a manifest must meet on its own is a msgspec constraint here, so `schema/manifest.schema.json`
(generated from these Structs) carries it and a foreign author's JSON Schema validator agrees with the
kernel: the type picks the variant (`type` is the tag), sd, kb and gs plugins must give plannerHints,
each variant lists only its type's ops, limits are positive, ranges and enums are closed. What depends
on the machine (the command on PATH, paths inside the plugin folder, the allowlist) is the registry's.
"""

# No `from __future__ import annotations`: msgspec reads these Structs' annotations as objects, instead of
# compiling and evaluating ~250 strings at a process's first manifest (the registry's load: 2/3 of its CPU).
from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from .envelope import Descriptor, PlannerHints
from .vocab import OPS_BY_TYPE, CostClass, GsOp, KbOp, PlanOp, PluginType, ReadField, SdOp, ValOp

Handoff = Literal["inline", "file"]  # how a kb-plugin receives a source's units (KbManifest.handoff)
ReplyForm = Literal["cnl", "msgpack"]  # how an sd-plugin may answer normalizePersistentContext

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
OPS_DOC = "The ops it implements, each an op of its type (at least one); absent: every op of its type."


def _ops(plugin_type: str) -> list:
    return msgspec.field(default_factory=lambda: list(OPS_BY_TYPE[plugin_type]))


class Build(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How to build a compiled plugin (Go, Rust, ...) before it can run: a program and its arguments,
    run without a shell in the plugin's folder by the author's tools (`mrpvm plugin build`, and `plugin
    check`/`run` when the command is missing or older than a source file), never by the kernel at call
    time. It must produce the manifest's `command`, a path inside the folder."""

    command: Annotated[
        str,
        Meta(pattern=r"\S", description="The build program: a name on PATH (e.g. go, cargo), never a shell."),
    ]
    args: Annotated[
        list[str], Meta(description="Its arguments, verbatim; e.g. build -trimpath -o bin/my-plugin .")
    ] = []


class ManifestBase(
    msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=False, tag_field="type"
):
    """The fields every plugin type shares; `type` (the tag) selects the variant below. Each field's
    description lands in the JSON Schema and in SPEC.md §7 (generated), so the docs cannot drift."""

    id: PluginId
    command: Command
    name: Annotated[str, Meta(description="Human name.")] = ""
    version: Annotated[str, Meta(description="Semver of the plugin.")] = "0.0.0"
    protocolVersion: Annotated[Literal[1], Meta(description="Must be 1.")] = 1
    description: Annotated[str, Meta(description="1-3 operationally useful sentences; planners read it.")] = (
        ""
    )
    costClass: Annotated[CostClass, Meta(description="cheap, moderate or expensive.")] = "moderate"
    usesLLM: Annotated[
        bool, Meta(description="Whether it calls the LLM; only then has its sandbox a network.")
    ] = False
    maxLLMCalls: Annotated[
        int,
        Meta(
            description="Most LLM calls per plugin call; a call gets a token for min(this, calls left).", ge=0
        ),
    ] = 0
    modelRoles: Annotated[
        list[str], Meta(description="LLM roles it uses (e.g. goal-fast); the first picks the model.")
    ] = []
    timeoutMs: Annotated[
        int,
        Meta(
            description="Longest time one call may take (ms); the kernel kills it after (a call on a whole "
            "text, normalizePersistentContext or onSourceText, gets this per started MiB of the text; an LLM "
            "plugin's call gets at least the time its LLM calls need on the endpoint, §Deadline).",
            gt=0,
        ),
    ] = 15000
    maxInputSizeBytes: Annotated[
        int,
        Meta(
            description="Larger requests are refused by the kernel before the plugin starts. A kb-plugin's "
            "onSourceText request is about 6x its source plus 64 KB (ingest_request_bytes).",
            gt=0,
        ),
    ] = DEFAULT_MAX_INPUT_BYTES
    maxOutputBytes: Annotated[
        int, Meta(description="Larger outputs are an error (OUTPUT_TOO_LARGE); the process is killed.", gt=0)
    ] = DEFAULT_MAX_OUTPUT_BYTES
    plannerHints: Annotated[
        PlannerHints | None, Meta(description="How planners weigh it; required for sd, kb and gs plugins.")
    ] = None
    provides: Annotated[list[str], Meta(description="Capabilities, e.g. retrieve-context.")] = []
    accepts: Annotated[list[str], Meta(description="Inputs it takes, e.g. chat-turn, source-text.")] = []
    args: Annotated[
        list[str],
        Meta(description="Arguments, passed verbatim (no shell); a path must stay inside the folder."),
    ] = []
    worker: Annotated[
        bool, Meta(description="Implements worker mode (framed requests on one long-lived process).")
    ] = False
    concurrency: Annotated[
        int, Meta(description="Worker pool size, and most one-shot processes at once.", gt=0)
    ] = 1
    ops: Sequence[str] = ()  # narrowed by each variant to its type's ops
    reads: Annotated[
        list[ReadField],
        Meta(
            description="The optional request fields it uses (payload, budget, llm, paths, ids); the "
            "conformance check requires exit 2 for a wrong-typed field listed here, only warns for others."
        ),
    ] = []
    build: Annotated[
        Build | None, Meta(description="How to build a compiled plugin's `command` (see Build).")
    ] = None
    tags: Annotated[list[str], Meta(description="Free labels.")] = []

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
    replyForm: Annotated[
        ReplyForm,
        Meta(
            description="How it may answer normalizePersistentContext: `cnl` (CNL Markdown) or `msgpack` (asked "
            "with payload.replyForm, it may answer the typed document as one MessagePack map instead; "
            "protocol/SPEC.md, Compact reply). CNL is accepted either way."
        ),
    ] = "cnl"


class PlanManifest(ManifestBase, tag="mrp-plan-plugin"):
    ops: Annotated[list[PlanOp], Meta(min_length=1, description=OPS_DOC)] = _ops("mrp-plan-plugin")
    outcomeBatch: Annotated[
        int,
        Meta(
            ge=1,
            le=16,
            description="Most outcomes one recordOutcome call may carry (1: one per call). Above 1, the daemon "
            "may send several turns' outcomes in one call (payload.outcomes), and every `## Observation` of "
            "the reply names its outcome (`Outcome: <requestId>`; protocol/SPEC.md, Outcome batches).",
        ),
    ] = 1


class KbManifest(ManifestBase, tag="kb-plugin"):
    plannerHints: PlannerHints
    ops: Annotated[list[KbOp], Meta(min_length=1, description=OPS_DOC)] = _ops("kb-plugin")
    handoff: Annotated[
        Handoff,
        Meta(
            description="How onSourceText hands over a source's units: `inline` (text and units in the "
            "request) or `file` (payload.unitsFile: a read-only MessagePack file bound for this call only, "
            "holding the text, the units and the kernel's analysis of each; protocol/SPEC.md, Units handoff)."
        ),
    ] = "inline"
    indexFormat: Annotated[
        str,
        Meta(
            max_length=64,
            description="The format of the index it keeps in its artifacts folder (any string; empty: not "
            "declared). When it changes, each node's kernel removes that folder for every KB as it opens, "
            "forgets the plugin's acknowledgements and offers every source again, so the index is rebuilt "
            "(protocol/SPEC.md, Index format).",
        ),
    ] = ""


class GsManifest(ManifestBase, tag="gs-plugin"):
    plannerHints: PlannerHints
    ops: Annotated[list[GsOp], Meta(min_length=1, description=OPS_DOC)] = _ops("gs-plugin")
    pure: Annotated[
        bool,
        Meta(
            description="Its worker's solve reply depends only on the request's prompt, context, payload and "
            "paths (not on the ids, the deadline, the clock, an LLM or what earlier calls left behind): the "
            "kernel may answer an identical request with the reply it kept (protocol/SPEC.md, Pure solvers). "
            "Ignored for a plugin that uses an LLM or is not a worker.",
        ),
    ] = False


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
