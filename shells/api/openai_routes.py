"""OpenAI-compatible surface: `POST /v1/chat/completions` (stream and non-stream) and `GET /v1/models`.

Non-stream: `choices[0].message.content` is what a person reads — the answer of each intent (a short
heading per intent only when there are several), a note only when an answer is weak, then a compact
"Sources" list (file › heading); the full response document, trace and ids are in the extra fields.
`finish_reason` "stop", usage zeros (the kernel counts LLM calls, not tokens: see `llm_calls`). Stream:
`chat.completion.chunk` events (the role first, then that answer in line-aligned pieces, then an empty
delta with finish_reason "stop" carrying the MRP-VM fields), then `data: [DONE]`. A failure after the stream started is one
`data: {"error": {...}}` event (what OpenAI clients raise as an APIError). Both echo `request_id`,
`session_id`, the plugins that served the turn, `response_document` and `execution_trace`.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from . import sse, turns
from .bodies import json_response, read_json
from .chat_schemas import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    Choice,
    ChunkChoice,
    Delta,
    Model,
    ModelList,
)
from .errors import describe
from .routing import RouteSpec

PINNABLE = ("mrp-plan-plugin", "sd-plugin", "kb-plugin", "gs-plugin", "val-plugin")


async def chat_completions(request: Request) -> Response:
    ctx = request.app.state.ctx
    body = await read_json(request, ChatCompletionRequest)
    request.scope["state"]["session_id"] = body.session_id
    context, message = turns.split_messages(body.messages)
    turn = await turns.prepare(
        ctx, body, message, context="" if body.session_id else context, model=body.model
    )
    created = int(time.time())
    if not body.stream:
        started = time.perf_counter()
        result = await turns.run(ctx, turn)
        completion = ChatCompletion(
            id=f"chatcmpl-{result.request_id}",
            created=created,
            model=body.model,
            choices=[Choice(message=AssistantMessage(content=result.answer_markdown))],
            **turns.echo(result),
        )
        return json_response(completion, headers=turns.timing(started))

    async def produce(emit: sse.Emit) -> None:
        ids: dict[str, str] = {}

        def chunk(delta: Delta, finish: str | None = None, **extra: Any) -> bytes:
            return sse.event(
                ChatCompletionChunk(
                    id=f"chatcmpl-{ids.get('request', 'pending')}",
                    object="chat.completion.chunk",
                    created=created,
                    model=body.model,
                    choices=[ChunkChoice(delta=delta, finish_reason=finish)],
                    **extra,
                )
            )

        def on_event(item: dict[str, Any]) -> None:
            if item.get("event") == "turn-start" and "request" not in ids:
                ids["request"] = item["requestId"]
                emit(chunk(Delta(role="assistant", content=""), request_id=item["requestId"]))

        try:
            result = await turns.run(ctx, turn, on_event)
        except Exception as exc:  # after the headers: report in the stream
            status, code, text, details, _ = describe(exc)
            emit(
                sse.event(
                    {
                        "error": {
                            "message": text,
                            "type": "server_error" if status >= 500 else "invalid_request_error",
                            "code": code,
                            "status": status,
                            "details": details,
                        }
                    }
                )
            )
            return
        ids["request"] = result.request_id
        for piece in sse.pieces(result.answer_markdown):
            emit(chunk(Delta(content=piece)))
        echo = turns.echo(result)
        emit(
            chunk(
                Delta(),
                "stop",
                request_id=result.request_id,
                session_id=result.session_id,
                status=result.status,
                processing_mode=echo["processing_mode"],
                retrieval_profile=echo["retrieval_profile"],
                response_document=result.response_document,
                execution_trace=echo["execution_trace"],
            )
        )
        emit(sse.DONE)

    return sse.EventStream(produce)


async def list_models(request: Request) -> Response:
    """`mrp-vm`, plus `mrp-vm:<id>` for every enabled plugin a turn can be pinned to."""
    ctx = request.app.state.ctx
    ids = [turns.MODEL]
    for plugin_type in PINNABLE:
        ids += [f"{turns.MODEL}:{entry.id}" for entry in ctx.enabled(plugin_type)]
    created = int(request.app.state.started)
    return json_response(ModelList(data=[Model(id=i, created=created) for i in ids]))


ROUTES = [
    RouteSpec(
        "/v1/chat/completions",
        "POST",
        chat_completions,
        "OpenAI-compatible chat completion (stream or not); MRP-VM fields as extra body fields",
        body=ChatCompletionRequest,
        response=ChatCompletion,
        stream=ChatCompletionChunk,
        tag="openai",
    ),
    RouteSpec(
        "/v1/models",
        "GET",
        list_models,
        "Models: mrp-vm and its plugin pins",
        response=ModelList,
        tag="openai",
    ),
]
