"""KB and session lifecycle over HTTP (DS026): a KB's detail, deletion, source removal, export and import;
a session's workspace and preferences. The kernel does the work (knowledge/ops.py, knowledge/archive.py);
these routes read bodies and shape answers.

- `DELETE /kbs/{kb}/sources/{source}` removes the source's units and tells the kb-plugins through the
  index ledger (an unacknowledged removal is offered again), so its answers go with it.
- `GET /kbs/{kb}/export` answers the KB archive (application/zip); `POST /kbs/import[?name=N]` takes one
  as the raw body (application/zip) and creates a KB whose sources every kb-plugin indexes.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import msgspec
from mrpvm.kernel.budgets import check_deliberation
from mrpvm.knowledge import archive as kb_archive
from mrpvm.knowledge import ops as kb_ops
from mrpvm.protocol.envelope import Pins
from starlette.requests import Request
from starlette.responses import Response

from . import turns
from .bodies import json_response, read_json
from .errors import ApiError
from .kb_routes import kb_info, source_info
from .mrpvm_routes import session_info, session_param
from .routing import QueryParam, RouteSpec
from .schemas import KbInfo, SessionInfo, SessionUpdate, SourceInfo


class KbDetail(msgspec.Struct, kw_only=True):
    kb: KbInfo
    sources: list[SourceInfo] = []


class KbDeleted(msgspec.Struct, kw_only=True):
    deleted: str
    name: str


class SourceRemoved(msgspec.Struct, kw_only=True):
    """The KB after the removal, the removed source, and plugins that failed to drop it (they owe it)."""

    kb: KbInfo
    removed: SourceInfo
    warnings: list[str] = []


class KbImported(msgspec.Struct, kw_only=True):
    kb: KbInfo
    sources: list[SourceInfo] = []
    warnings: list[str] = []


class Workspace(msgspec.Struct, kw_only=True):
    """A session's workspace: the session, its mounted KB with its sources, its committed units."""

    session: SessionInfo
    kb: KbInfo | None = None
    sources: list[SourceInfo] = []
    session_units: int = 0


def _kb_param(request: Request) -> str:
    return request.path_params["kb_id"]


async def kb_detail(request: Request) -> Response:
    ctx = request.app.state.ctx
    kb = ctx.store.get_kb(_kb_param(request))
    sources = [source_info(s) for s in ctx.store.list_sources(kb.id)]
    return json_response(KbDetail(kb=kb_info(ctx, kb), sources=sources))


async def delete_kb(request: Request) -> Response:
    ctx = request.app.state.ctx
    kb = await anyio.to_thread.run_sync(kb_ops.delete_kb, ctx.store, ctx.home, _kb_param(request))
    return json_response(KbDeleted(deleted=kb.id, name=kb.name))


async def remove_source(request: Request) -> Response:
    ctx = request.app.state.ctx
    kb = ctx.store.get_kb(_kb_param(request))
    record, warnings = await kb_ops.remove_source(ctx, kb, request.path_params["source_id"])
    return json_response(SourceRemoved(kb=kb_info(ctx, kb), removed=source_info(record), warnings=warnings))


async def export_kb(request: Request) -> Response:
    ctx = request.app.state.ctx
    kb, data = await anyio.to_thread.run_sync(kb_archive.export_kb, ctx, _kb_param(request))
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in kb.name) or "kb"
    return Response(
        data,
        media_type=kb_archive.MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{safe}.mrpvm-kb.zip"'},
    )


async def import_kb(request: Request) -> Response:
    ctx = request.app.state.ctx
    data = await request.body()
    if not data:
        raise ApiError(400, "EMPTY_BODY", "this request needs a KB archive (application/zip) as its body")
    name = request.query_params.get("name") or None
    result = await kb_archive.import_kb(ctx, data, name)
    imported = KbImported(
        kb=kb_info(ctx, result.kb),
        sources=[source_info(s) for s in result.sources],
        warnings=result.warnings,
    )
    return json_response(imported, 201)


async def workspace(request: Request) -> Response:
    ctx = request.app.state.ctx
    record = ctx.store.get_session(session_param(request))
    kb = ctx.store.find_kb(record.kbId) if record.kbId else None
    info = session_info(ctx, record)
    return json_response(
        Workspace(
            session=info,
            kb=kb_info(ctx, kb) if kb else None,
            sources=[source_info(s) for s in ctx.store.list_sources(kb.id)] if kb else [],
            session_units=info.unit_count,
        )
    )


async def update_session(request: Request) -> Response:
    """Change what is given: a plugin field ("" clears it), a legacy name, deliberation_level, title."""
    ctx = request.app.state.ctx
    session_id = session_param(request)
    record = ctx.store.get_session(session_id)
    body = await read_json(request, SessionUpdate)
    given: dict[str, Any] = msgspec.structs.asdict(turns.turn_pins(ctx, _without_empty(body), None))
    current = msgspec.structs.asdict(record.preferences)
    for field, stage in turns.PIN_FIELDS.items():
        if getattr(body, field) == "":
            current[stage] = None
    current.update({k: v for k, v in given.items() if v})
    if current != msgspec.structs.asdict(record.preferences):
        record = ctx.store.set_session_preferences(session_id, Pins(**current))
    if body.deliberation_level is not None:
        check_deliberation(body.deliberation_level)
        record = ctx.store.set_session_deliberation(session_id, body.deliberation_level)
    if body.title is not None:
        record = ctx.store.set_session_title(session_id, " ".join(body.title.split()))
    return json_response(session_info(ctx, record))


def _without_empty(body: SessionUpdate) -> SessionUpdate:
    """The body with cleared ("") plugin fields left out of the pin checks."""
    cleared = {f: None for f in turns.PIN_FIELDS if getattr(body, f) == ""}
    return msgspec.structs.replace(body, **cleared) if cleared else body


ROUTES = [
    RouteSpec("/kbs/{kb_id}", "GET", kb_detail, "A KB (name or id) with its sources", response=KbDetail),
    RouteSpec(
        "/kbs/{kb_id}",
        "DELETE",
        delete_kb,
        "Delete a KB with its sources, units and plugin artifacts (sessions mounting it keep running without it)",
        response=KbDeleted,
    ),
    RouteSpec(
        "/kbs/{kb_id}/sources/{source_id}",
        "DELETE",
        remove_source,
        "Remove one source (id or name) with its units; kb-plugins drop it from their indexes",
        response=SourceRemoved,
    ),
    RouteSpec(
        "/kbs/{kb_id}/export",
        "GET",
        export_kb,
        "The KB as a portable archive (application/zip: manifest.json, units, texts)",
    ),
    RouteSpec(
        "/kbs/import",
        "POST",
        import_kb,
        "Create a KB from an archive sent as the raw body (application/zip); kb-plugins index every source",
        response=KbImported,
        status=201,
        query=(QueryParam("name", "The new KB's name (default: the archived name)"),),
    ),
    RouteSpec(
        "/sessions/{session_id}",
        "PATCH",
        update_session,
        "Change a session's preferences (plugins, legacy names, deliberation_level)",
        body=SessionUpdate,
        response=SessionInfo,
    ),
    RouteSpec(
        "/sessions/{session_id}/workspace",
        "GET",
        workspace,
        "A session's workspace: the session, its mounted KB and that KB's sources",
        response=Workspace,
    ),
]
