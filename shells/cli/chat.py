"""`mrpvm chat`: a REPL keeping one session across turns."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from mrpvm.shells.cli.ask import continued_session, print_answer, read_source
from mrpvm.shells.cli.ask_turn import load_sources
from mrpvm.shells.cli.common import LocalLLMFlag


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)


def chat(
    session: Annotated[str | None, typer.Option("--session", help="Continue this session.")] = None,
    continue_last: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the session used last.")
    ] = False,
    source: Annotated[
        list[Path] | None,
        typer.Option("--source", help="A file loaded into the session as context (repeatable)."),
    ] = None,
    kb: Annotated[
        str | None, typer.Option("--kb", help="Mount this KB (name or id) for a new session.")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each full response (every source with its id).")
    ] = False,
    local_llm: LocalLLMFlag = False,
) -> None:
    """A REPL keeping one session across turns; EOF (Ctrl-D) or `exit` ends it."""
    import anyio
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.kernel.errors import KernelError
    from mrpvm.knowledge.context import open_context
    from mrpvm.shells.cli.common import run_with_local_llm

    if continue_last:
        session = continued_session(session)
    sources = list(source or [])
    texts = [read_source(p) for p in sources]

    async def go(environ: dict[str, str] | None) -> None:
        ctx = await open_context(environ)
        try:
            session_id = session or ctx.store.create_session(kb_id=kb).id
            ctx.store.get_session(session_id)
            if sources:
                added = await load_sources(ctx, session_id, sources, texts)
                sys.stderr.write(f"loaded {added} context units into session {session_id}\n")
            sys.stderr.write(f"session {session_id} — type a question, `exit` or Ctrl-D to end\n")
            while True:
                try:
                    line = await anyio.to_thread.run_sync(input, "you> ")
                except EOFError:
                    sys.stderr.write("\n")
                    return
                line = line.strip()
                if not line:
                    continue
                if line in ("exit", "quit", ":q"):
                    return
                try:
                    result = await run_turn(ctx, TurnRequest(message=line, session_id=session_id, kb=kb))
                except KernelError as err:
                    sys.stderr.write(f"mrpvm: error: {err.code}: {err.message}\n")
                    continue
                print_answer(result, verbose=verbose)
        finally:
            await ctx.aclose()

    anyio.run(run_with_local_llm, go, local_llm)
