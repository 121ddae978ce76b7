"""The closed vocabularies of protocol v1 (SPEC.md §6.3): one Literal type and one tuple per enum.

The tuples are what validators and schema generators read; the Literals are what msgspec checks.
"""

from typing import Literal, get_args

PluginType = Literal["sd-plugin", "mrp-plan-plugin", "kb-plugin", "gs-plugin", "val-plugin"]
Op = Literal[
    "detectSeeds",
    "normalizePersistentContext",
    "buildPlan",
    "recordOutcome",
    "retrieve",
    "onSourceText",
    "onSessionEvent",
    "solve",
    "validate",
]
Status = Literal[
    "success",
    "error",
    "unsupported",
    "insufficient",
    "no-context",
    "needs-decomposition",
    "accepted",
    "rejected",
    "skipped",
    "partial",
]
Act = Literal[
    "compare",
    "explain",
    "recommend",
    "diagnose",
    "implement",
    "verify",
    "define",
    "evaluate",
    "identify",
    "describe",
]
Role = Literal[
    "Comparison",
    "Explanation",
    "Procedure",
    "Definition",
    "Evaluation",
    "Diagnostic",
    "Constraint",
    "Narrative",
    "Description",
]
Relation = Literal[
    "uses",
    "provides",
    "has_capability",
    "depends_on",
    "part_of",
    "instance_of",
    "relevant_for",
    "supports",
    "mentions",
    "about",
    "causes",
]
# What kind of answer an intent expects (sd-plugins may set it; kb and gs plugins may score with it).
AnswerType = Literal[
    "person",
    "number",
    "version",
    "date",
    "duration",
    "location",
    "option",
    "command",
    "yes-no",
    "reason",
    "procedure",
    "comparison",
    "definition",
    "entity",
]
PhaseScope = Literal["sd-plugin", "mrp-plan-plugin", "kb-plugin", "gs-plugin", "frame", "val-plugin"]
KUType = Literal["atomic", "composite", "aggregate"]
Purpose = Literal["task-evidence", "strategy-guidance", "mixed"]
CostClass = Literal["cheap", "moderate", "expensive"]
Depth = Literal["shallow", "medium", "deep"]
# The ops each plugin type may declare (a manifest's `ops`).
SdOp = Literal["detectSeeds", "normalizePersistentContext"]
PlanOp = Literal["buildPlan", "recordOutcome"]
KbOp = Literal["retrieve", "onSourceText", "onSessionEvent"]
GsOp = Literal["solve"]
ValOp = Literal["validate"]
ConfidenceWord = Literal["high", "medium", "low"]
# The optional request fields a plugin may ignore; a manifest's `reads` says which ones it uses, and the
# conformance check then holds it to refusing them when they have the wrong type (SPEC.md §5, §10).
ReadField = Literal["payload", "budget", "llm", "paths", "ids"]

PLUGIN_TYPES: tuple[str, ...] = get_args(PluginType)
OPS: tuple[str, ...] = get_args(Op)
STATUSES: tuple[str, ...] = get_args(Status)
ACTS: tuple[str, ...] = get_args(Act)
ANSWER_TYPES: tuple[str, ...] = get_args(AnswerType)
ROLES: tuple[str, ...] = get_args(Role)
RELATIONS: tuple[str, ...] = get_args(Relation)
PHASE_SCOPES: tuple[str, ...] = get_args(PhaseScope)
KU_TYPES: tuple[str, ...] = get_args(KUType)
PURPOSES: tuple[str, ...] = get_args(Purpose)
COST_CLASSES: tuple[str, ...] = get_args(CostClass)
CONFIDENCE_WORDS: tuple[str, ...] = get_args(ConfidenceWord)
READ_FIELDS: tuple[str, ...] = get_args(ReadField)

# The op a plugin type serves when a request names none, and every op a type may declare.
MAIN_OP: dict[str, str] = {
    "sd-plugin": "detectSeeds",
    "mrp-plan-plugin": "buildPlan",
    "kb-plugin": "retrieve",
    "gs-plugin": "solve",
    "val-plugin": "validate",
}
OPS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "sd-plugin": get_args(SdOp),
    "mrp-plan-plugin": get_args(PlanOp),
    "kb-plugin": get_args(KbOp),
    "gs-plugin": get_args(GsOp),
    "val-plugin": get_args(ValOp),
}

# DS004: which KU roles serve which act; used to derive UtilityActs and to boost retrieval.
ROLES_FOR_ACT: dict[str, tuple[str, ...]] = {
    "compare": ("Comparison", "Description", "Evaluation"),
    "explain": ("Explanation", "Description", "Narrative", "Definition"),
    "recommend": ("Evaluation", "Constraint", "Comparison", "Procedure"),
    "diagnose": ("Diagnostic", "Explanation", "Constraint"),
    "implement": ("Procedure", "Constraint", "Description"),
    "verify": ("Constraint", "Evaluation", "Description"),
    "define": ("Definition", "Description"),
    "evaluate": ("Evaluation", "Constraint", "Description", "Narrative"),
    "identify": ("Description", "Narrative", "Definition"),
    "describe": ("Description", "Narrative", "Explanation", "Definition"),
}
ACTS_FOR_ROLE: dict[str, tuple[str, ...]] = {
    role: tuple(act for act in ACTS if role in ROLES_FOR_ACT[act]) for role in ROLES
}

from .no_context import NO_CONTEXT_ANSWER as NO_CONTEXT_ANSWER  # noqa: E402 - kept typing-free there

# One-shot exit codes (DS016).
EXIT_OK = 0
EXIT_PROCESSING_ERROR = 1
EXIT_INVALID_INPUT = 2
EXIT_TIMEOUT = 3

# How large an ingest's `onSourceText` request is relative to its source (protocol/SPEC.md §7): the text
# itself plus every knowledge unit of its tree with its metadata. Measured over Markdown documents with
# sd-symbolic: 4-5x the source for documents of 10 KB and more, more for tiny ones (a fixed part per
# request). A kb-plugin's `maxInputSizeBytes` should be at least `ingest_request_bytes(largest source)`.
INGEST_REQUEST_FACTOR = 6
INGEST_REQUEST_OVERHEAD = 64 * 1024


def ingest_request_bytes(source_bytes: int) -> int:
    """The `maxInputSizeBytes` a kb-plugin needs to be sent a source of `source_bytes` bytes on ingest."""
    return INGEST_REQUEST_FACTOR * source_bytes + INGEST_REQUEST_OVERHEAD


# A call that handles a whole text (normalizePersistentContext of a chunk, onSourceText of a source) gets
# the manifest's timeoutMs per started MiB of that text (protocol/SPEC.md §3, Deadline): its work grows
# with the text, so a fixed deadline that fits a page fails a 4 MiB chunk on a busy machine.
INGEST_DEADLINE_UNIT_BYTES = 1 << 20


def ingest_deadline_ms(timeout_ms: int, text_bytes: int) -> int:
    """The deadline of a call on `text_bytes` bytes of text: `timeout_ms` per started MiB (at least one)."""
    return timeout_ms * max(1, -(-text_bytes // INGEST_DEADLINE_UNIT_BYTES))
