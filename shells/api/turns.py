"""From a chat body to a kernel turn: pins (model string and fields), history as context, deadline, echo.

Model pins: `model` is `mrp-vm`, or `mrp-vm:<plugin-id>[,<plugin-id>...]`; each id pins the stage its
plugin type serves (planner, sd, kb, gs, val). The explicit body fields (`planner_plugin`, ...) win over
the model string. Without `session_id`, every message before the last user message is loaded as
context (one source named `messages`) into a fresh session and the last user message is the turn; with
`session_id`, the session already holds its history and earlier messages are ignored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from mrpvm.kernel.engine import PIN_TYPES, TurnRequest, TurnResult, run_turn
from mrpvm.kernel.errors import DeadlineExceeded
from mrpvm.knowledge import ops as kb_ops
from mrpvm.knowledge.ingest import load_session_context
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.legacy import derived_legacy, legacy_pins

from .chat_schemas import ChatMessage, PinFields, SourceText, TurnEcho, TurnFields
from .errors import ApiError, invalid_field

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

MODEL = "mrp-vm"
PIN_FIELDS = {
    "planner_plugin": "planner",
    "seed_detector_plugin": "sd",
    "kb_plugin": "kb",
    "goal_solver_plugin": "gs",
    "validator_plugin": "val",
}
STAGE_OF_TYPE = {t: s for s, t in PIN_TYPES.items()}
HISTORY_SOURCE = "messages"
DEFAULT_SD = "sd-symbolic"
DEADLINE_GRACE_S = 5.0  # past the engine's own request deadline before the daemon gives up on a turn


# --------------------------------------------------------------------------- pins


def check_plugin(ctx: KernelContext, field: str, plugin_id: str, stage: str | None = None) -> str:
    entry = ctx.registry.get(plugin_id) if plugin_id in ctx.registry else None
    if entry is None:
        raise ApiError(
            400,
            "UNKNOWN_PLUGIN",
            f"{field}: no plugin '{plugin_id}' is registered",
            {"field": field, "plugin": plugin_id},
        )
    if stage is not None and entry.type != PIN_TYPES[stage]:
        raise ApiError(
            400,
            "UNKNOWN_PLUGIN",
            f"{field}: '{plugin_id}' is a {entry.type}, not a {PIN_TYPES[stage]}",
            {"field": field, "plugin": plugin_id, "type": entry.type},
        )
    return entry.type


def model_pins(ctx: KernelContext, model: str) -> dict[str, str]:
    """`mrp-vm` → no pins; `mrp-vm:kb-fast,gs-symbolic` → {"kb": "kb-fast", "gs": "gs-symbolic"}."""
    name, sep, rest = model.strip().partition(":")
    if name != MODEL:
        raise invalid_field(
            "model",
            f"unknown model '{model}' (use '{MODEL}' or '{MODEL}:<plugin-id>[,<plugin-id>...]'; see GET /v1/models)",
            400,
            "UNKNOWN_MODEL",
        )
    pins: dict[str, str] = {}
    for plugin_id in (p.strip() for p in rest.split(",") if sep):
        if not plugin_id:
            continue
        stage = STAGE_OF_TYPE.get(check_plugin(ctx, "model", plugin_id))
        if stage is None or stage in pins:
            why = "cannot be pinned" if stage is None else f"pins {stage} twice"
            raise invalid_field("model", f"'{plugin_id}' {why}", 400, "BAD_MODEL")
        pins[stage] = plugin_id
    return pins


def turn_pins(ctx: KernelContext, fields: PinFields, model: str | None) -> Pins:
    """Pins from the model string, then the legacy fields (processing_mode, retrieval_profile), then the
    explicit `*_plugin` fields: a later source wins for its stage."""
    pins = model_pins(ctx, model) if model else {}
    legacy = legacy_pins(getattr(fields, "processing_mode", None), getattr(fields, "retrieval_profile", None))
    for stage, plugin_id in legacy.items():
        check_plugin(ctx, "retrieval_profile" if stage == "kb" else "processing_mode", plugin_id, stage)
        pins[stage] = plugin_id
    for field, stage in PIN_FIELDS.items():
        value = getattr(fields, field, None)
        if value:
            check_plugin(ctx, field, value, stage)
            pins[stage] = value
    return Pins(**pins)


def pins_echo(pins: Pins) -> dict[str, str]:
    return {k: v for k, v in msgspec.structs.asdict(pins).items() if v}


# --------------------------------------------------------------------------- messages


def split_messages(messages: list[ChatMessage]) -> tuple[str, str]:
    """(context text from the earlier messages, the last user message)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    if last is None:
        raise invalid_field("messages", "there is no user message")
    message = messages[last].text().strip()
    if not message:
        raise invalid_field(f"messages[{last}].content", "the last user message is empty")
    context = "\n\n".join(t for t in (m.text().strip() for m in messages[:last]) if t)
    return context, message


async def prepare(
    ctx: KernelContext,
    fields: TurnFields,
    message: str,
    *,
    context: str = "",
    model: str | None = None,
) -> TurnRequest:
    """Check pins and the session, load history context into a fresh session, and build the TurnRequest."""
    if not message.strip():
        raise invalid_field("message", "the message is empty")
    pins = turn_pins(ctx, fields, model)
    session_id = fields.session_id
    if session_id is not None:
        ctx.store.get_session(session_id)  # SESSION_NOT_FOUND before any work
    if fields.kb:
        ctx.store.get_kb(fields.kb)
    if session_id is None and context:
        session = ctx.store.create_session(kb_id=fields.kb)
        sd = pins.sd or DEFAULT_SD
        try:
            await load_session_context(ctx, session.id, context, HISTORY_SOURCE, sd)
        except BaseException:
            ctx.store.delete_session(session.id)
            raise
        session_id = session.id
    return TurnRequest(
        message=message,
        session_id=session_id,
        kb=fields.kb,
        pins=pins,
        max_llm_calls=fields.max_llm_calls,
        deliberation_level=fields.deliberation_level,
    )


async def load_sources(
    ctx: KernelContext, fields: TurnFields, sources: list[SourceText]
) -> tuple[str, list[str]]:
    """A chat body's `sources` loaded into its session before the turn, as the requests they replace would
    load them (`mrpvm ask --source` in one request, not three): without `session_id` a new session as `POST
    /sessions {kb}` makes it (kb-plugins hear session-created), then each text as `POST
    /sessions/{id}/context` loads it (sd-symbolic). (the session id, the load warnings)."""
    session_id = fields.session_id
    if session_id is None:
        record, _ = await kb_ops.create_session(ctx, fields.kb, Pins())
        session_id = record.id
    else:
        ctx.store.get_session(session_id)  # SESSION_NOT_FOUND before any work
    warnings: list[str] = []
    for source in sources:
        loaded = await load_session_context(ctx, session_id, source.text, source.source_name, DEFAULT_SD)
        warnings.extend(loaded.warnings)
    return session_id, warnings


# --------------------------------------------------------------------------- running


async def run(
    ctx: KernelContext, request: TurnRequest, on_event: Callable[[dict[str, Any]], None] | None = None
) -> TurnResult:
    """run_turn with the daemon's deadline: the engine's request deadline plus a grace period → 504.

    recordOutcome is deferred (the answer does not wait for it); explainability and shutdown drain it.
    """
    limit = ctx.config.engine.budget.requestTimeoutMs / 1000 + DEADLINE_GRACE_S
    with anyio.move_on_after(limit):
        return await run_turn(ctx, request, on_event=on_event, defer_outcome=True)
    raise DeadlineExceeded(
        f"the turn did not finish within {limit:.0f} s; its staged units were discarded",
        {"deadlineMs": int(limit * 1000), "session": request.session_id},
    )


def timing(started: float) -> dict[str, str]:
    """A Server-Timing header with the turn's wall time in the daemon (clients and benches read it)."""
    return {"Server-Timing": f"turn;dur={(time.perf_counter() - started) * 1000.0:.3f}"}


def echo(result: TurnResult) -> dict[str, Any]:
    """The TurnEcho fields of a result (what MRP-VM adds to a completion); the legacy names are derived
    from the plugins that served. `execution_trace` is a msgspec.Raw: the encoder copies it in."""
    derived: dict[str, Any] = {
        **derived_legacy(result.seed_detector_plugin, result.kb_plugin, result.goal_solver_plugin),
        "execution_trace": msgspec.Raw(result.trace_json),  # the JSON the commit stored, not encoded again
    }
    return {f: derived[f] if f in derived else getattr(result, f) for f in TurnEcho.__struct_fields__}
