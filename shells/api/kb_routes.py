"""KB repositories (DS026) through the daemon: list/create KBs; mount, save and fork per session; workspace sources."""

from __future__ import annotations

from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.knowledge import ops as kb_ops
from mrpvm.knowledge.ingest import ingest_source
from starlette.requests import Request
from starlette.responses import Response

from . import turns
from .bodies import json_response, pick, read_json
from .errors import invalid_field
from .mrpvm_routes import session_info, session_param
from .routing import RouteSpec
from .schemas import (
    KbCreate,
    KbFork,
    KbInfo,
    KbList,
    KbLoad,
    KbOperation,
    KbSave,
    SourceInfo,
    WorkspaceSource,
)

WORKSPACE_PREFIX = "workspace-"


def kb_info(ctx, kb: KbRecord) -> KbInfo:
    stats = ctx.store.kb_stats(kb.id)
    return KbInfo(
        id=kb.id, name=kb.name, created_at=kb.createdAt, sources=stats["sources"], units=stats["units"]
    )


def source_info(record: SourceRecord) -> SourceInfo:
    return SourceInfo(
        id=record.id,
        name=record.name,
        unit_count=record.unitCount,
        bytes=record.bytes,
        hash=record.hash,
        unchanged=getattr(record, "unchanged", False),
        chunks=getattr(record, "chunks", 0),
        warnings=list(getattr(record, "warnings", [])),
        notified=list(getattr(record, "notified", [])),
    )


def _result(ctx, session_id: str, kb: KbRecord, sources: list[SourceRecord], warnings: list[str]) -> Response:
    return json_response(
        KbOperation(
            session=session_info(ctx, ctx.store.get_session(session_id)),
            kb=kb_info(ctx, kb),
            sources=[source_info(s) for s in sources],
            warnings=warnings,
        )
    )


async def list_kbs(request: Request) -> Response:
    ctx = request.app.state.ctx
    return json_response(KbList(kbs=[kb_info(ctx, kb) for kb in ctx.store.list_kbs()]))


async def create_kb(request: Request) -> Response:
    ctx = request.app.state.ctx
    body = await read_json(request, KbCreate)
    return json_response(kb_info(ctx, ctx.store.create_kb(body.name)), 201)


async def kb_load(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    ctx.store.get_session(session_id)
    body = await read_json(request, KbLoad)
    record, warnings = await kb_ops.mount_kb(ctx, session_id, pick(body, "kb", "kb_id", "kbId", "name"))
    return _result(ctx, session_id, ctx.store.get_kb(record.kbId), [], warnings)


async def kb_mount(request: Request) -> Response:
    """Upstream's name for kb/load."""
    return await kb_load(request)


async def kb_save(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    ctx.store.get_session(session_id)
    body = await read_json(request, KbSave)
    kb, source, warnings = await kb_ops.save_session(ctx, session_id, body.kb, body.source_name)
    return _result(ctx, session_id, kb, [source], warnings)


async def kb_fork(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    session = ctx.store.get_session(session_id)
    body = await read_json(request, KbFork)
    original = body.kb or session.kbId
    if original is None:
        raise invalid_field("kb", "the session has no mounted KB; name the KB to fork")
    kb, sources, warnings = await kb_ops.fork_kb(ctx, original, body.name, session_id)
    _, notes = await kb_ops.mount_kb(ctx, session_id, kb.id)
    warnings += notes
    return _result(ctx, session_id, kb, sources, warnings)


async def workspace_source(request: Request) -> Response:
    """Ingest a source into the session's mounted KB; a session without one gets `workspace-<session id>`."""
    ctx = request.app.state.ctx
    session_id = session_param(request)
    session = ctx.store.get_session(session_id)
    body = await read_json(request, WorkspaceSource)
    text, name = pick(body, "text", "content"), pick(body, "source_name", "name")
    turns.check_plugin(ctx, "seed_detector_plugin", body.seed_detector_plugin, "sd")
    if session.kbId is None:
        kb = kb_ops.ensure_kb(ctx, WORKSPACE_PREFIX + session_id)
        await kb_ops.mount_kb(ctx, session_id, kb.id)
    else:
        kb = ctx.store.get_kb(session.kbId)
    result = await ingest_source(ctx, kb, name, text, sd_plugin=body.seed_detector_plugin, force=body.force)
    return _result(ctx, session_id, kb, [result], list(result.warnings))


ROUTES = [
    RouteSpec("/kbs", "GET", list_kbs, "List KB repositories with source and unit counts", response=KbList),
    RouteSpec(
        "/kbs", "POST", create_kb, "Create an empty KB repository", body=KbCreate, response=KbInfo, status=201
    ),
    RouteSpec(
        "/sessions/{session_id}/kb/load",
        "POST",
        kb_load,
        "Mount a KB (name or id) into the session (kb-plugins hear kb-loaded)",
        body=KbLoad,
        response=KbOperation,
    ),
    RouteSpec(
        "/sessions/{session_id}/kb/mount",
        "POST",
        kb_mount,
        "Mount a KB into the session (upstream's name for kb/load)",
        body=KbLoad,
        response=KbOperation,
    ),
    RouteSpec(
        "/sessions/{session_id}/kb/save",
        "POST",
        kb_save,
        "Save the session's committed units as one source of a KB (created if absent)",
        body=KbSave,
        response=KbOperation,
    ),
    RouteSpec(
        "/sessions/{session_id}/kb/fork",
        "POST",
        kb_fork,
        "Copy a KB (default: the mounted one) under a new name and mount the copy",
        body=KbFork,
        response=KbOperation,
    ),
    RouteSpec(
        "/sessions/{session_id}/workspace/sources",
        "POST",
        workspace_source,
        "Ingest a source text into the session's mounted KB (a workspace KB is created and mounted if none)",
        body=WorkspaceSource,
        response=KbOperation,
    ),
]
