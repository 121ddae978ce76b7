"""Plugins, LLM role settings, liveness and readiness.

`/health` is liveness only (the process serves HTTP) and is the one path open without the token;
`/ready` answers 200 when the registry has plugins, the store answers, this node owes its kb indexes nothing
(knowledge/index_watch.py rebuilds what other nodes wrote) and no enabled plugin is in crash-loop backoff, else
503 with the same body saying what is wrong. The store part names the backend, where it is (never with
credentials) and the node. It also reports the plugin
sandbox (mode, active, mechanism, reason, isolation): information for the operator, so behind the token,
not on the open `/health`; an inactive sandbox (mode `auto` on a machine without it) does not make the
daemon unready.
"""

from __future__ import annotations

import time
from typing import Any

import anyio.to_thread
import msgspec
from mrpvm.knowledge.index_watch import owed
from mrpvm.protocol.vocab import PLUGIN_TYPES
from starlette.requests import Request
from starlette.responses import Response

from .bodies import json_response, read_json
from .errors import ApiError, invalid_field
from .event_loop import running_loop_name
from .routing import QueryParam, RouteSpec
from .schemas import Health, LlmRoles, LlmRolesUpdate, PluginInfo, PluginList, Ready

VERSION = "0.1.0"


async def list_plugins(request: Request) -> Response:
    ctx = request.app.state.ctx
    plugin_type = request.query_params.get("type")
    if plugin_type is not None and plugin_type not in PLUGIN_TYPES:
        raise invalid_field(
            "type", f"unknown plugin type '{plugin_type}' (one of {', '.join(PLUGIN_TYPES)})", 400
        )
    entries = ctx.registry.list(plugin_type) if plugin_type else ctx.registry.list()
    plugins = [
        PluginInfo(
            id=e.id,
            type=e.type,
            name=e.manifest.name,
            version=e.manifest.version,
            description=e.manifest.description,
            enabled=ctx.is_enabled(e.id),
            builtin=e.builtin,
            usesLLM=e.manifest.usesLLM,
            maxLLMCalls=e.manifest.maxLLMCalls,
            costClass=e.manifest.costClass,
            worker=e.manifest.worker,
            ops=list(e.manifest.ops),
            modelRoles=list(e.manifest.modelRoles),
            timeoutMs=e.manifest.timeoutMs,
            maxInputSizeBytes=e.manifest.maxInputSizeBytes,
            concurrency=e.manifest.concurrency,
            plannerHints=msgspec.to_builtins(e.manifest.plannerHints) if e.manifest.plannerHints else None,
            provides=list(e.manifest.provides),
            accepts=list(e.manifest.accepts),
            tags=list(e.manifest.tags),
        )
        for e in entries
    ]
    return json_response(PluginList(plugins=plugins))


# --------------------------------------------------------------------------- LLM roles (DS028)


def role_table(request: Request) -> Any:
    """The bridge's role table when the kernel has a bridge, else one over the store; 503 if unavailable."""
    state = request.app.state
    table = getattr(getattr(state.ctx, "llm", None), "roles", None) or getattr(state, "roles", None)
    if table is None:
        try:
            from mrpvm.kernel.llm.settings import RoleTable, settings_store_for
        except ImportError:
            raise ApiError(
                503, "NOT_AVAILABLE", "LLM role settings are not available in this kernel"
            ) from None
        table = state.roles = RoleTable(
            settings_store_for(state.ctx.store), env_model=state.ctx.environ.get("MRPVM_LLM_MODEL", "")
        )
    return table


def _roles(table: Any) -> LlmRoles:
    from mrpvm.kernel.llm.settings import ROLES

    eff = table.effective()
    return LlmRoles(
        defaultModel=eff.defaultModel,
        roles={role: eff.roles.get(role, "") for role in ROLES},
        plugins=dict(eff.plugins),
    )


async def get_llm_roles(request: Request) -> Response:
    return json_response(_roles(role_table(request)))


async def put_llm_roles(request: Request) -> Response:
    table = role_table(request)
    body = await read_json(request, LlmRolesUpdate)
    assignments = dict(body.roles)
    assignments.update({f"plugin:{plugin_id}": model for plugin_id, model in body.plugins.items()})
    if body.defaultModel is not None:
        assignments["default"] = body.defaultModel
    if not assignments:
        raise invalid_field("roles", "nothing to change (give roles, plugins or defaultModel)", 400)
    for plugin_id in body.plugins:
        if plugin_id not in request.app.state.ctx.registry:
            raise ApiError(
                400, "UNKNOWN_PLUGIN", f"plugins: no plugin '{plugin_id}'", {"field": f"plugins.{plugin_id}"}
            )
    table.update(assignments)  # unknown roles: BadInput UNKNOWN_ROLE (400)
    return json_response(_roles(table))


# --------------------------------------------------------------------------- health


async def health(request: Request) -> Response:
    return json_response(Health(version=VERSION, uptime_s=round(time.time() - request.app.state.started, 3)))


LLM_STATUS_TTL_S = 30.0  # /ready is polled: the endpoint is probed at most this often


async def _llm_status(request: Request) -> Any:
    """The LLM endpoint's status (kernel/llm/status.py), probed at most every LLM_STATUS_TTL_S."""
    from mrpvm.kernel.llm.settings import ROLES
    from mrpvm.kernel.llm.status import llm_status

    state = request.app.state
    cached = getattr(state, "llm_status", None)
    if cached is not None and time.monotonic() - cached[0] < LLM_STATUS_TTL_S:
        return cached[1]
    effective = role_table(request).effective()
    roles = {role: effective.roles.get(role, "") or effective.defaultModel for role in ROLES}
    ctx = state.ctx
    status = await llm_status(ctx.environ, bridge=getattr(ctx, "llm", None), roles=roles)
    state.llm_status = (time.monotonic(), status)
    return status


async def ready(request: Request) -> Response:
    ctx = request.app.state.ctx
    problems: list[str] = []
    by_type = {t: len(ctx.registry.list(t)) for t in PLUGIN_TYPES}
    if not sum(by_type.values()):
        problems.append("no plugins are registered")
    store: dict[str, Any] = {
        "backend": ctx.store.backend,
        "location": ctx.store.describe(),  # never with credentials
        "node": ctx.store.node_id,
    }
    if ctx.store.path is not None:
        store["path"] = str(ctx.store.path)
    try:
        store["schemaVersion"] = await anyio.to_thread.run_sync(ctx.store.schema_version)
        store["ok"] = True
        debt = await anyio.to_thread.run_sync(owed, ctx)
        # partial: sources indexed in part (searchable; completed by the index watch), not a problem
        store["owed"] = {"sources": debt.sources, "removals": debt.removals, "partial": debt.partial}
        if not debt.nothing:
            problems.append(
                f"node {debt.node} still owes its kb indexes {debt.sources} source(s) and"
                f" {debt.removals} removal(s) (being rebuilt from the store)"
            )
    except Exception as err:  # noqa: BLE001 - reported, not raised
        store.update(ok=False, error=str(err))
        problems.append(f"the store does not answer: {err}")
    report = ctx.supervisor.health()
    states: dict[str, int] = {}
    for item in report.values():
        states[item.get("state", "unknown")] = states.get(item.get("state", "unknown"), 0) + 1
    backoff = sorted(p for p, item in report.items() if item.get("state") == "backoff" and ctx.is_enabled(p))
    if backoff:
        problems.append(f"plugins in crash-loop backoff: {', '.join(backoff)}")
    supervisor = {
        "states": states,
        "workers": sum(int(item.get("workers", 0)) for item in report.values()),
        "busy": sum(int(item.get("busy", 0)) for item in report.values()),
        "backoff": backoff,
        "problems": problems,
    }
    import msgspec

    sandbox = msgspec.to_builtins(ctx.supervisor.sandbox.status)
    llm = msgspec.to_builtins(await _llm_status(request))
    body = Ready(
        ready=not problems,
        registry=by_type,
        store=store,
        supervisor=supervisor,
        sandbox=sandbox,
        llm=llm,
        eventLoop=running_loop_name(),
    )
    return json_response(body, 200 if not problems else 503)


ROUTES = [
    RouteSpec(
        "/plugins",
        "GET",
        list_plugins,
        "Registered plugins (optionally of one type) and whether each is enabled",
        response=PluginList,
        query=(QueryParam("type", "a plugin type", {"type": "string", "enum": list(PLUGIN_TYPES)}),),
    ),
    RouteSpec("/settings/llm-roles", "GET", get_llm_roles, "Effective LLM model per role", response=LlmRoles),
    RouteSpec(
        "/settings/llm-roles",
        "PUT",
        put_llm_roles,
        "Change models per role / plugin / default (only the keys given; an empty model clears)",
        body=LlmRolesUpdate,
        response=LlmRoles,
    ),
    RouteSpec("/health", "GET", health, "Liveness (open without the token)", response=Health, open=True),
    RouteSpec(
        "/ready",
        "GET",
        ready,
        "Readiness: registry, store, supervisor summary (503 when not ready)",
        response=Ready,
    ),
]
