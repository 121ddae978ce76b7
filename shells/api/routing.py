"""The daemon's route table: one RouteSpec per (method, path), used both to route and to write /openapi.json."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class QueryParam:
    name: str
    description: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})


@dataclass(frozen=True, slots=True)
class RouteSpec:
    """A route: `body` and `response` are msgspec types (documented from their JSON Schema); `stream` is
    the type of the SSE events' data when the route can stream (text/event-stream)."""

    path: str
    method: str
    endpoint: Endpoint
    summary: str
    body: type | None = None
    response: type | None = None
    stream: Any = None
    status: int = 200
    query: tuple[QueryParam, ...] = ()
    tag: str = "mrp-vm"
    open: bool = False  # reachable without the bearer token

    def route(self) -> Route:
        return Route(self.path, self.endpoint, methods=[self.method])
