"""Paging of long lists (`?limit=N&cursor=C&order=asc|desc`): one parser for the routes that page.

A cursor is opaque to clients: the `next_cursor` of the previous page, passed back unchanged (today the
position of the page's first item; clients must not build one). A missing cursor starts at the first
item in the order asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from .errors import invalid_field
from .routing import QueryParam


@dataclass(frozen=True, slots=True)
class Page:
    limit: int
    cursor: int | None
    descending: bool

    def next_cursor(self, positions: list[int]) -> str | None:
        """Given the positions of up to limit+1 items fetched, the cursor of the next page (None: none)."""
        return str(positions[self.limit]) if len(positions) > self.limit else None


def page_params(request: Request, *, default_limit: int, max_limit: int) -> Page:
    """The page a request asks for; 400 INVALID_FIELD naming the parameter when one is malformed."""
    query = request.query_params
    raw = query.get("limit")
    limit = default_limit
    if raw is not None:
        if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= max_limit:
            raise invalid_field("limit", f"must be an integer from 1 to {max_limit} (got {raw!r})", 400)
        limit = int(raw)
    raw = query.get("cursor")
    cursor = None
    if raw is not None and raw != "":
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:
            raise invalid_field("cursor", "not a cursor this API gave (pass next_cursor back unchanged)", 400)
        cursor = int(raw)
    order = query.get("order", "asc")
    if order not in ("asc", "desc"):
        raise invalid_field("order", f"must be asc or desc (got {order!r})", 400)
    return Page(limit=limit, cursor=cursor, descending=order == "desc")


def page_query(default_limit: int, max_limit: int) -> tuple[QueryParam, ...]:
    """The OpenAPI description of the three parameters."""
    return (
        QueryParam(
            "limit",
            f"items per page (default {default_limit}, at most {max_limit})",
            {"type": "integer", "minimum": 1, "maximum": max_limit, "default": default_limit},
        ),
        QueryParam("cursor", "the next_cursor of the previous page (opaque)"),
        QueryParam(
            "order", "asc (oldest first, default) or desc", {"type": "string", "enum": ["asc", "desc"]}
        ),
    )
