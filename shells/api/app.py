"""The daemon's starlette app: one KernelContext for every request, routes, guard, errors, lifespan.

    app = create_app()              # the lifespan opens (and at shutdown closes) a KernelContext
    app = create_app(ctx)           # use an open context; the caller closes it...
    app = create_app(ctx, owns_context=True)   # ...unless the app should close it at shutdown

Warm worker pools live in the context's supervisor and are shared by all requests. Shutdown (uvicorn's
lifespan): uvicorn stops accepting, waits for in-flight requests (a streaming turn runs to its end even
if its client left), then the lifespan closes the context: the supervisor stops the workers, the store
closes.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import msgspec
from mrpvm.kernel.errors import ConfigError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from . import (
    browse_routes,
    kb_routes,
    lifecycle_routes,
    mrpvm_routes,
    openai_routes,
    system_routes,
    web_routes,
)
from .errors import EXCEPTION_HANDLERS
from .middleware import BODY_TIMEOUT_S, Guard
from .openapi import build
from .origin import OriginPolicy
from .routing import RouteSpec

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

TITLE = "MRP-VM kernel daemon"
DEFAULT_MAX_BODY = 1 << 20


class ApiSettings(msgspec.Struct, kw_only=True):
    """Daemon options: bearer token (None: no auth), body size limit, graceful-shutdown wait, the names and
    origins accepted besides the served address (origin.py), and the connection timeouts (server.py)."""

    token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY
    shutdown_timeout_s: float = 30.0
    allowed_hosts: list[str] = []
    allowed_origins: list[str] = []
    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    body_timeout_s: float = BODY_TIMEOUT_S

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, **given: object) -> ApiSettings:
        """`MRPVM_API_TOKEN`, `MRPVM_API_MAX_BODY_BYTES`, `MRPVM_API_ALLOWED_HOSTS` and
        `MRPVM_API_ALLOWED_ORIGINS` (comma-separated), overridden by the non-None `given` values."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        if env.get("MRPVM_API_TOKEN"):
            values["token"] = env["MRPVM_API_TOKEN"]
        for name, key in (
            ("MRPVM_API_ALLOWED_HOSTS", "allowed_hosts"),
            ("MRPVM_API_ALLOWED_ORIGINS", "allowed_origins"),
        ):
            if env.get(name):
                values[key] = [part.strip() for part in env[name].split(",") if part.strip()]
        if env.get("MRPVM_API_MAX_BODY_BYTES"):
            try:
                values["max_body_bytes"] = int(env["MRPVM_API_MAX_BODY_BYTES"])
            except ValueError:
                raise ConfigError(
                    f"MRPVM_API_MAX_BODY_BYTES={env['MRPVM_API_MAX_BODY_BYTES']!r} is not an integer"
                ) from None
        values.update({k: v for k, v in given.items() if v is not None})
        try:
            settings = msgspec.convert(values, cls)
        except msgspec.ValidationError as err:
            raise ConfigError(f"daemon settings: {err}") from None
        if settings.max_body_bytes <= 0:
            raise ConfigError("the body size limit must be positive")
        for key in ("header_timeout_s", "keep_alive_s", "body_timeout_s"):
            if getattr(settings, key) <= 0:
                raise ConfigError(f"daemon settings: {key} must be positive")
        settings.policy()  # a bad allowed host or origin is a ConfigError now, not at the first request
        return settings

    def policy(self) -> OriginPolicy:
        return OriginPolicy(self.allowed_hosts, self.allowed_origins)


async def openapi_json(request: Request) -> Response:
    state = request.app.state
    if state.openapi is None:
        state.openapi = msgspec.json.encode(
            build(state.route_specs, title=TITLE, version=system_routes.VERSION)
        )
    return Response(state.openapi, media_type="application/json")


OPENAPI_ROUTE = RouteSpec("/openapi.json", "GET", openapi_json, "This OpenAPI document", tag="meta")


def route_specs() -> list[RouteSpec]:
    return [
        *openai_routes.ROUTES,
        *mrpvm_routes.ROUTES,
        *kb_routes.ROUTES,
        *lifecycle_routes.ROUTES,
        *browse_routes.ROUTES,
        *system_routes.ROUTES,
        OPENAPI_ROUTE,
        *web_routes.ROUTES,
    ]


def create_app(
    ctx: KernelContext | None = None,
    settings: ApiSettings | None = None,
    *,
    environ: dict[str, str] | None = None,
    owns_context: bool | None = None,
) -> Starlette:
    settings = settings or ApiSettings.from_environ(environ)
    specs = route_specs()
    owned = ctx is None if owns_context is None else owns_context

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        from mrpvm.knowledge.context import open_context
        from mrpvm.knowledge.index_watch import IndexWatch

        context = ctx if ctx is not None else await open_context(environ)
        app.state.ctx = context
        try:
            # this node's indexes follow what other nodes write to a shared store
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(IndexWatch(context).run)
                try:
                    yield
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            if owned:
                with anyio.CancelScope(shield=True):
                    await context.aclose()

    app = Starlette(
        routes=[spec.route() for spec in specs],
        middleware=[
            Middleware(
                Guard,
                token=settings.token,
                max_body_bytes=settings.max_body_bytes,
                open_paths=frozenset(s.path for s in specs if s.open and "{" not in s.path),
                open_prefixes=tuple(s.path.split("{", 1)[0] for s in specs if s.open and "{" in s.path),
                policy=settings.policy(),
                body_timeout_s=settings.body_timeout_s,
            )
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    app.state.settings = settings
    app.state.route_specs = specs
    app.state.openapi = None
    app.state.started = time.time()
    return app


def app_factory() -> Starlette:
    """For `uvicorn --factory mrpvm.shells.api.app:app_factory` (settings and context from the environment)."""
    return create_app()
