"""What the web app reads beyond the DS013 surface: a KB's sources, one unit's text (renaming is `PATCH /sessions/{id}`).

- `GET /kbs/{kb}/sources`: the KB (name or id) and its sources in ingest order.
- `GET /sessions/{id}/units/{unit_id}`: a unit a turn of this session cited, with its full text. A unit
  id is looked up among the session's units first, then in the KB that holds its source (a KU id starts
  with its source id, and source ids are unique across KBs), so a source stays readable after the session
  mounts another KB.
"""

from __future__ import annotations

from typing import Any

import msgspec
from mrpvm.protocol.document import KnowledgeUnit
from starlette.requests import Request
from starlette.responses import Response

from .bodies import json_response
from .errors import ApiError
from .kb_routes import kb_info, source_info
from .mrpvm_routes import session_param
from .routing import RouteSpec
from .schemas import KbSources, UnitText


async def kb_sources(request: Request) -> Response:
    ctx = request.app.state.ctx
    kb = ctx.store.get_kb(request.path_params["kb"])
    sources = [source_info(s) for s in ctx.store.list_sources(kb.id)]
    return json_response(KbSources(kb=kb_info(ctx, kb), sources=sources))


def _place(unit: KnowledgeUnit, source_name: str | None) -> list[str]:
    headings = [h.strip() for h in (unit.sectionTitle or "").split(" > ") if h.strip()]
    return [p for p in (source_name, *headings) if p]


def _unit_text(unit: KnowledgeUnit, origin: Any, **where: Any) -> UnitText:
    text = unit.textBody if unit.textBody and unit.textBody.strip() else unit.body
    source_name = where.get("source_name") or unit.sourceName
    return UnitText(
        id=unit.id,
        origin=origin,
        place=_place(unit, source_name),
        text=text,
        unit=msgspec.to_builtins(unit),
        **{**where, "source_name": source_name},
    )


async def unit_text(request: Request) -> Response:
    ctx = request.app.state.ctx
    session_id = session_param(request)
    unit_id = request.path_params["unit_id"]
    store = ctx.store
    for unit in store.session_units(session_id):  # SESSION_NOT_FOUND first
        if unit.id == unit_id:
            return json_response(_unit_text(unit, "session", source_id=unit.sourceId))
    source = store.source_by_id(unit_id.split("::", 1)[0])
    unit = store.kb_unit(source.kbId, unit_id) if source is not None else None
    if source is None or unit is None:
        raise ApiError(
            404,
            "UNIT_NOT_FOUND",
            f"no unit '{unit_id}' in session {session_id} or in the KB of its source",
            {"unit": unit_id},
        )
    kb = store.get_kb(source.kbId)
    return json_response(
        _unit_text(unit, "kb", kb_id=kb.id, kb_name=kb.name, source_id=source.id, source_name=source.name)
    )


ROUTES = [
    RouteSpec("/kbs/{kb}/sources", "GET", kb_sources, "A KB's sources in ingest order", response=KbSources),
    RouteSpec(
        "/sessions/{session_id}/units/{unit_id}",
        "GET",
        unit_text,
        "A unit a turn cited: the session's units first, then the KB holding its source; full text and place",
        response=UnitText,
    ),
]
