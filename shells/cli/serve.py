"""`mrpvm serve`: the kernel daemon (starlette + uvicorn), loopback by default.

Prints `mrpvm: serving on http://HOST:PORT` on stderr once it accepts connections (with `--port 0` the
line names the port the OS chose). SIGINT/SIGTERM shut it down gracefully: no new connections, in-flight
requests and turns finish (up to --shutdown-timeout seconds), then the workers stop and the store closes.
A non-loopback address needs a token (refused otherwise); a token-less daemon whose plugins run without
the sandbox says on stderr that plugins can call it (API.md "Security").
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from mrpvm.shells.cli.common import LocalLLMFlag


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (loopback unless told otherwise).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port (0: any free port).")
    ] = 8787,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="MRPVM_API_TOKEN",
            help="Require 'Authorization: Bearer TOKEN' on every request but /health (env MRPVM_API_TOKEN).",
        ),
    ] = None,
    max_body_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-body-bytes",
            min=1,
            help="Request body limit (default 1 MiB; env MRPVM_API_MAX_BODY_BYTES).",
        ),
    ] = None,
    shutdown_timeout: Annotated[
        float, typer.Option("--shutdown-timeout", min=0.0, help="Seconds in-flight requests get at shutdown.")
    ] = 30.0,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log every request.")
    ] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "warning",
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Also accept this Host header: NAME (any port) or NAME:PORT; repeatable "
            "(env MRPVM_API_ALLOWED_HOSTS, comma-separated).",
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin",
            help="Let browser pages of this origin (scheme://host[:port]) call the daemon (CORS); repeatable "
            "(env MRPVM_API_ALLOWED_ORIGINS).",
        ),
    ] = None,
    header_timeout: Annotated[
        float | None,
        typer.Option(
            "--header-timeout", min=0.1, help="Seconds a connection gets to send a request head (10)."
        ),
    ] = None,
    keep_alive_timeout: Annotated[
        float | None,
        typer.Option(
            "--keep-alive-timeout", min=0.1, help="Seconds an idle keep-alive connection stays open (5)."
        ),
    ] = None,
    body_timeout: Annotated[
        float | None,
        typer.Option("--body-timeout", min=0.1, help="Seconds a request body may stall before 408 (30)."),
    ] = None,
    local_llm: LocalLLMFlag = False,
) -> None:
    """Run the HTTP daemon: OpenAI-compatible /v1/chat/completions plus the MRP-VM session/KB/plugin API."""
    from mrpvm.shells.api import ApiSettings, event_loop
    from mrpvm.shells.api.server import binding_refusal
    from mrpvm.shells.cli.common import CliError, run_with_local_llm

    settings = ApiSettings.from_environ(
        token=token or None,
        max_body_bytes=max_body_bytes,
        shutdown_timeout_s=shutdown_timeout,
        allowed_hosts=allowed_host or None,
        allowed_origins=allowed_origin or None,
        header_timeout_s=header_timeout,
        keep_alive_s=keep_alive_timeout,
        body_timeout_s=body_timeout,
    )
    refused = binding_refusal(host, settings)
    if refused:
        raise CliError(refused)

    async def daemon(environ: dict[str, str] | None) -> None:  # a local LLM child stops after the daemon
        await _serve(host, port, settings, access_log, log_level, environ=environ)

    try:
        event_loop.run(run_with_local_llm(daemon, local_llm))  # uvloop when installed (event_loop.py)
    except event_loop.EventLoopError as err:
        raise CliError(str(err)) from None


def _bind(host: str, port: int):
    import socket

    from mrpvm.shells.cli.common import CliError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise CliError(f"cannot resolve --host {host}: {err.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as err:
        sock.close()
        raise CliError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _loopback(host: str) -> str:
    """The loopback address a local `mrpvm ask` reaches this daemon at (a wildcard bind included)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


async def _serve(
    host: str, port: int, settings, access_log: bool, log_level: str, environ: dict[str, str] | None = None
) -> None:
    import asyncio
    import os

    import uvicorn
    from mrpvm.knowledge.context import open_context
    from mrpvm.protocol.gc_pause import settle_for_serving
    from mrpvm.shells.api import create_app
    from mrpvm.shells.api.server import plugin_reach_warning, uvicorn_config
    from mrpvm.shells.cli.daemon_file import DaemonAddress, advertise, withdraw

    sock = _bind(host, port)
    ctx = await open_context(environ)
    await ctx.warm()  # every pool at its size now, not midway through the first load
    app = create_app(ctx, settings, owns_context=True)  # the lifespan closes it at shutdown

    class Server(uvicorn.Server):
        async def shutdown(self, sockets=None) -> None:
            try:
                await super().shutdown(sockets)
            finally:  # here, not after serve(): uvicorn re-raises SIGTERM/SIGINT once serve() ends
                withdraw(ctx.home, os.getpid())

    server = Server(uvicorn_config(app, settings, access_log=access_log, log_level=log_level))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        settle_for_serving()  # what it keeps for its life is loaded: out of the collector's sight
        ctx.store.checkpoint_in_background()  # no commit on the event loop copies the journal back
        bound = sock.getsockname()
        address = DaemonAddress(
            pid=os.getpid(), host=_loopback(bound[0]), port=bound[1], token=bool(settings.token)
        )
        advertise(ctx.home, address)  # before the ready line: whoever waits for it finds the file
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        auth = "bearer token required" if settings.token else "no token"
        sys.stderr.write(f"mrpvm: serving on http://{shown}:{bound[1]} ({auth})\n")
        warning = plugin_reach_warning(ctx, settings)
        if warning:
            sys.stderr.write(f"mrpvm: warning: {warning}\n")
        sys.stderr.flush()
    try:
        await task
    finally:
        withdraw(ctx.home, os.getpid())
        if not server.started:  # the lifespan never ran: close the context here
            await ctx.aclose()
