"""Server-sent events: framing, and a response whose events come from a producer that always runs to its end.

The producer gets `emit(bytes)` and runs in the response's own task. If the client goes away, the
remaining events are dropped but the producer (a chat turn) still finishes and commits, so a turn that
started is never cut in half by a disconnect; at shutdown uvicorn waits for it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .schemas import encode

log = logging.getLogger("mrpvm.api")
DONE = b"data: [DONE]\n\n"
Emit = Callable[[bytes], None]
Producer = Callable[[Emit], Awaitable[None]]


def event(data: Any, name: str | None = None) -> bytes:
    """One SSE event: an optional `event:` line and one `data:` line of compact JSON."""
    head = f"event: {name}\n" if name else ""
    return head.encode() + b"data: " + encode(data) + b"\n\n"


def pieces(text: str, size: int = 240) -> list[str]:
    """The text in line-aligned pieces of about `size` characters; joined they give the text back."""
    out: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        if current and len(current) + len(line) > size:
            out.append(current)
            current = ""
        current += line
    if current:
        out.append(current)
    return out


class EventStream(Response):
    media_type = "text/event-stream"

    def __init__(self, producer: Producer, headers: dict[str, str] | None = None):
        # Like StreamingResponse: no `body`, so no Content-Length header.
        self.status_code = 200
        self.background = None
        self.init_headers({"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})})
        self.producer = producer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        tx, rx = anyio.create_memory_object_stream[bytes](math.inf)

        async def produce() -> None:
            with tx:
                try:
                    await self.producer(tx.send_nowait)
                except Exception:  # the producer reports its own errors; this is a bug guard
                    log.exception("an event stream producer failed")

        gone = False
        async with anyio.create_task_group() as group:
            group.start_soon(produce)
            async with rx:
                async for chunk in rx:
                    parts = [chunk]
                    while True:  # coalesce what is already queued into one write
                        try:
                            parts.append(rx.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    if gone:
                        continue
                    try:
                        await send({"type": "http.response.body", "body": b"".join(parts), "more_body": True})
                    except OSError:
                        gone = True
        if not gone:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
