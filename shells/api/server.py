"""uvicorn for the daemon: the connection timeouts and the Config `mrpvm serve` runs.

uvicorn closes a keep-alive connection idle after a response (`timeout_keep_alive`), but a connection
that never sends a complete request head — opened and left silent, or a head trickled byte by byte — is
kept forever. The protocol class here adds a **header timeout**: from the moment a connection opens, and
from the first byte of each later request, the head must be complete within `header_timeout_s` or the
connection is closed. A body that stalls is the Guard's (`408 REQUEST_TIMEOUT`, middleware.py).
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

import uvicorn

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from .app import ApiSettings


class OneSendTransport:
    """A connection's transport that sends a response's head with the start of its body, in one send.

    uvicorn writes a response's status line and headers when the app starts the response, and its body
    when the app sends it: two sends, each waking the client (on a loaded machine the first wake-up
    preempts the daemon inside the second send). Here a write that is a response head (`HTTP/`) is held
    and goes out with the next write (`writelines`: one send of both); a head with nothing after it in the
    same turn of the event loop (a streamed response's first chunk coming later) goes out on its own at
    the loop's next turn. Everything else is the transport's."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop):
        self._transport, self._loop = transport, loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.writelines((held, data))
        elif data[:5] == b"HTTP/" and not self._transport.is_closing():
            self._held = data
            self._loop.call_soon(self._flush)
        else:
            self._transport.write(data)

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


@functools.cache
def header_timeout_protocol(timeout_s: float, base: type[asyncio.Protocol] | None = None) -> type[Any]:
    """uvicorn's HTTP protocol (httptools when installed, else h11) with a header-read timeout, its
    responses' heads sent with their bodies (OneSendTransport)."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    parent: Any = base

    class HeaderTimeoutProtocol(parent):
        """Closes a connection whose request head is not complete `timeout_s` after it began."""

        header_timeout_s = timeout_s
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(OneSendTransport(transport, self.loop))
            self._arm_header_timer()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request head is complete: the app has it
                self._disarm_header_timer()
            elif self.cycle is None or self.cycle.response_complete:
                self._arm_header_timer()  # bytes of a head not complete yet (no request in flight)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timed_out)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timed_out(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    HeaderTimeoutProtocol.__name__ = f"HeaderTimeout{base.__name__}"
    return HeaderTimeoutProtocol


def uvicorn_config(
    app: ASGIApp, settings: ApiSettings, *, access_log: bool = False, log_level: str = "warning"
) -> uvicorn.Config:
    """The daemon's uvicorn Config: its timeouts, graceful shutdown, no Server header."""
    return uvicorn.Config(
        app,
        lifespan="on",
        access_log=access_log,
        log_level=log_level.lower(),
        http=header_timeout_protocol(settings.header_timeout_s),
        timeout_keep_alive=settings.keep_alive_s,  # type: ignore[arg-type]  # uvicorn takes a float fine
        timeout_graceful_shutdown=settings.shutdown_timeout_s,  # type: ignore[arg-type]
        server_header=False,
    )


def is_loopback(host: str) -> bool:
    """Whether `--host` names only loopback addresses (a name is resolved: every address must be)."""
    import ipaddress
    import socket

    text = host.strip().strip("[]")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        pass
    if not text:
        return False
    try:
        infos = socket.getaddrinfo(text, None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%", 1)[0]).is_loopback for i in infos)


def binding_refusal(host: str, settings: ApiSettings) -> str | None:
    """Why the daemon may not serve on `host` with these settings: a non-loopback address needs a token."""
    if settings.token or is_loopback(host):
        return None
    return (
        f"--host {host} is not a loopback address: the daemon would answer anyone who can reach it. "
        "Give a token (--token or MRPVM_API_TOKEN) to serve beyond this machine"
    )


def plugin_reach_warning(ctx: Any, settings: ApiSettings) -> str | None:
    """A token-less daemon is reachable by every local process; plugins are kept away from it only by the
    sandbox (no network, or for LLM plugins a private network that reaches only the LLM endpoint). When the
    sandbox is not active the warning says so (one line)."""
    if settings.token:
        return None
    status = ctx.supervisor.sandbox.status
    if status.active:
        return None
    return (
        f"no token and the plugin sandbox is not active ({status.reason}): any plugin process can call "
        "this daemon's API as you; give --token to close that"
    )
