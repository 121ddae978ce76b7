"""The DS013 chat and session surface: `/chat/completions` with named SSE events, sessions, context, explainability.

SSE events of `POST /chat/completions` (stream=true, the default), in order:
`response.meta` (request/session ids, KB, pins), `progress` (one per plugin call start and end, as the
engine reports them), `response.delta` (the Markdown in line-aligned pieces), `response.completed`
(the whole turn: document, trace, plugins). A failure is one `error` event (the structured error body)
and ends the stream. With stream=false the body is the `response.completed` data.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from mrpvm.kernel.records import SessionRecord
from mrpvm.kernel.store_rows import now_iso
from mrpvm.knowledge import ops as kb_ops
from mrpvm.knowledge.ingest import load_session_context
from mrpvm.shells.legacy import derived_legacy
from starlette.requests import Request
from starlette.responses import Response

from . import sse, turns
from .bodies import json_response, pick, read_json
from .chat_schemas import MrpChatRequest, TurnResponse
from .errors import ApiError, describe
from .paging import page_params, page_query
from .routing import RouteSpec
from .schemas import (
    ContextLoad,
    ContextLoaded,
    Deleted,
    ErrorBody,
    Explainability,
    ExplainEntry,
    SessionCreate,
    SessionInfo,
    SessionList,
)

PREVIEW_CHARS = 280
EXPLAIN_LIMIT, EXPLAIN_MAX_LIMIT = 20, 200  # turns per explainability page: default, most


def session_info(ctx: Any, record: SessionRecord) -> SessionInfo:
    kb = ctx.store.find_kb(record.kbId) if record.kbId else None
    prefs = record.preferences
    return SessionInfo(
        session_id=record.id,
        kb_id=record.kbId,
        kb_name=kb.name if kb else None,
        preferences=turns.pins_echo(prefs),
        deliberation_level=record.deliberationLevel,
        **derived_legacy(prefs.sd, prefs.kb, prefs.gs),
        created_at=record.createdAt,
        updated_at=record.updatedAt,
        turn_count=record.turnCount,
        unit_count=len(ctx.store.session_units(record.id)),
        title=record.title,
    )


def session_param(request: Request) -> str:
    session_id = request.path_params["session_id"]
    request.scope["state"]["session_id"] = session_id
    return session_id


# --------------------------------------------------------------------------- chat


async def chat(request: Request) -> Response:
    ctx = request.app.state.ctx
    body = await read_json(request, MrpChatRequest)
    request.scope["state"]["session_id"] = body.session_id
    if (body.message is None) == (body.messages is None):
        raise ApiError(
            422, "VALIDATION_ERROR", "give exactly one of message and messages", {"field": "message"}
        )
    context, message = (
        ("", body.message or "") if body.messages is None else turns.split_messages(body.messages)
    )
    if body.message is not None and not body.message.strip():
        raise ApiError(422, "VALIDATION_ERROR", "message: the message is empty", {"field": "message"})
    loaded: list[str] | None = None
    if body.sources is not None:
        if body.messages is not None:
            raise ApiError(422, "VALIDATION_ERROR", "sources: give them with message", {"field": "sources"})
        turns.turn_pins(ctx, body, body.model)  # a bad pin is refused before any session work
        body.session_id, loaded = await turns.load_sources(ctx, body, body.sources)
        request.scope["state"]["session_id"] = body.session_id
    turn = await turns.prepare(
        ctx, body, message, context="" if body.session_id else context, model=body.model
    )
    if not body.stream:
        started = time.perf_counter()
        result = await turns.run(ctx, turn)
        done = TurnResponse(
            response_markdown=result.response_markdown,
            answer_markdown=result.answer_markdown,
            context_warnings=loaded,
            **turns.echo(result),
        )
        return json_response(done, headers=turns.timing(started))

    async def produce(emit: sse.Emit) -> None:
        seen: dict[str, str | None] = {"session": turn.session_id}

        def on_event(item: dict[str, Any]) -> None:
            if item.get("event") == "turn-start":
                seen["session"] = item.get("sessionId")
                meta = {
                    "request_id": item["requestId"],
                    "session_id": item.get("sessionId"),
                    "kb_id": item.get("kbId"),
                    "pins": turns.pins_echo(turn.pins),
                }
                emit(sse.event(meta, "response.meta"))
            else:
                emit(sse.event(item, "progress"))

        try:
            result = await turns.run(ctx, turn, on_event)
        except Exception as exc:
            status, code, text, details, session_id = describe(exc)
            error = ErrorBody(
                code=code,
                message=text,
                requestId=request.scope["state"].get("request_id"),
                sessionId=session_id or seen["session"],
                timestamp=now_iso(),
                details={**details, "status": status},
            )
            emit(sse.event(error, "error"))
            return
        for piece in sse.pieces(result.response_markdown):
            emit(sse.event({"request_id": result.request_id, "delta": piece}, "response.delta"))
        done = TurnResponse(
            response_markdown=result.response_markdown,
            answer_markdown=result.answer_markdown,
            context_warnings=loaded,
            **turns.echo(result),
        )
        emit(sse.event(done, "response.completed"))

    return sse.EventStream(produce)


# --------------------------------------------------------------------------- sessions


async def create_session(request: Request) -> Response:
    """A session with preferences (the pins' names; legacy names map to them); kb-plugins hear
    session-created."""
    ctx = request.app.state.ctx
    body = await read_json(request, SessionCreate, optional=True)
    prefs = turns.turn_pins(ctx, body, None)  # the same names and checks as the pins
    record, _ = await kb_ops.create_session(ctx, body.kb, prefs, body.deliberation_level)
    return json_response(session_info(ctx, record), 201)


async def list_sessions(request: Request) -> Response:
    ctx = request.app.state.ctx
    return json_response(SessionList(sessions=[session_info(ctx, s) for s in ctx.store.list_sessions()]))


async def get_session(request: Request) -> Response:
    ctx = request.app.state.ctx
    return json_response(session_info(ctx, ctx.store.get_session(session_param(request))))


async def delete_session(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    await ctx.background.drain(session_id)  # its turns' recordOutcome calls end first
    await kb_ops.delete_session(ctx, session_id)  # kb-plugins hear session-deleted
    return json_response(Deleted(deleted=session_id))


async def load_context(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    ctx.store.get_session(session_id)
    body = await read_json(request, ContextLoad)
    text = pick(body, "text", "content")
    name = pick(body, "source_name", "name", default="context")
    turns.check_plugin(ctx, "seed_detector_plugin", body.seed_detector_plugin, "sd")
    loaded = await load_session_context(ctx, session_id, text, name, body.seed_detector_plugin)
    return json_response(
        ContextLoaded(
            session_id=session_id,
            source_id=loaded.source_id,
            added=len(loaded),
            unit_ids=[u.id for u in loaded],
            warnings=list(loaded.warnings),
        )
    )


def _preview(turn: Any) -> str:
    groups = turn.responseDocument.get("groups") or []
    answers = [g.get("answerMarkdown", "") for g in groups if isinstance(g, dict)]
    text = " ".join(" ".join(a.split()) for a in answers if a) or " ".join(turn.responseMarkdown.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


async def explainability(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    page = page_params(request, default_limit=EXPLAIN_LIMIT, max_limit=EXPLAIN_MAX_LIMIT)
    await ctx.background.drain(session_id)  # calls its turns left running (recordOutcome) end first
    stored = await anyio.to_thread.run_sync(
        lambda: ctx.store.list_turns(
            session_id, start=page.cursor, limit=page.limit + 1, descending=page.descending
        )
    )
    next_cursor = page.next_cursor([t.turnIndex for t in stored])
    stored = stored[: page.limit]
    entries = [
        ExplainEntry(
            request_id=t.requestId,
            turn_index=t.turnIndex,
            user_message=t.userMessage,
            answer_preview=_preview(t),
            status=t.status,
            plugin_ids=t.pluginIds,
            llm_calls=t.llmCalls,
            duration_ms=t.durationMs,
            created_at=t.createdAt,
            response_document=t.responseDocument,
            trace=t.trace,
            answer_truncated=t.answerTruncated,
        )
        for t in stored
    ]
    return json_response(Explainability(session_id=session_id, turns=entries, next_cursor=next_cursor))


ROUTES = [
    RouteSpec(
        "/chat/completions",
        "POST",
        chat,
        "A chat turn: named SSE events (response.meta, progress, response.delta, response.completed, error)"
        " or, with stream=false, the completed turn as JSON",
        body=MrpChatRequest,
        response=TurnResponse,
        stream=dict[str, Any],
    ),
    RouteSpec(
        "/sessions",
        "POST",
        create_session,
        "Create a session",
        body=SessionCreate,
        response=SessionInfo,
        status=201,
    ),
    RouteSpec("/sessions", "GET", list_sessions, "List sessions", response=SessionList),
    RouteSpec("/sessions/{session_id}", "GET", get_session, "A session's metadata", response=SessionInfo),
    RouteSpec(
        "/sessions/{session_id}",
        "DELETE",
        delete_session,
        "Delete a session with its turns and units",
        response=Deleted,
    ),
    RouteSpec(
        "/sessions/{session_id}/context",
        "POST",
        load_context,
        "Load text as session KUs through an sd-plugin (kb-plugins are notified)",
        body=ContextLoad,
        response=ContextLoaded,
    ),
    RouteSpec(
        "/sessions/{session_id}/explainability",
        "GET",
        explainability,
        "Committed turns, a page at a time: ids, message, answer preview, plugins, response document,"
        " trace DAG",
        response=Explainability,
        query=page_query(EXPLAIN_LIMIT, EXPLAIN_MAX_LIMIT),
    ),
]
