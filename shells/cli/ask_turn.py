"""`mrpvm ask`'s in-process turn: its `--source` files loaded into the session, then one turn, in this process.

Shared by the full CLI (ask.py, chat.py) and its thin path (fast_ask.py), which runs a turn no daemon takes
without loading the command line's framework (typer, click: ~0.1 s of CPU of a one-question process). Imports
nothing of typer; the kernel is imported when a turn runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.engine import TurnResult
    from mrpvm.protocol.envelope import Pins


def run_in_process(
    question: str,
    *,
    sources: list[Path],
    texts: list[str],
    session: str | None,
    kb: str | None,
    pins: Pins,
    max_llm_calls: int | None,
    deliberation_level: int | None,
    local_llm: bool = False,
) -> TurnResult:
    """The turn of `question` in this process: a KernelContext opened, the plugins the turn may call started
    early (their starts overlap the sources' loading and the plans), the sources loaded into the session
    (a new one when `session` is None), the turn run, the context closed. The workers start as soon as the
    context can start them: the turn's own modules load afterwards, beside the workers' starts."""
    import asyncio

    from mrpvm.kernel.engine.warm_start import prestart_turn, record_next
    from mrpvm.knowledge.context import open_context

    async def turn(environ: dict[str, str] | None) -> TurnResult:
        ctx = await open_context(environ, opened=lambda opened: prestart_turn(opened, pins, kb))
        try:
            from mrpvm.kernel.engine import TurnRequest, run_turn

            session_id = session
            if sources:
                if session_id is None:
                    session_id = ctx.store.create_session(kb_id=kb).id
                await load_sources(ctx, session_id, sources, texts, defer_notices=True)
                ctx.supervisor.release_held_to_started()  # the started kb-plugins hear of them meanwhile
            request = TurnRequest(
                message=question,
                session_id=session_id,
                kb=kb,
                pins=pins,
                max_llm_calls=max_llm_calls,
                deliberation_level=deliberation_level,
            )
            result = await run_turn(ctx, request)
            record_next(ctx, pins)
            return result
        finally:
            await ctx.aclose(ending=True)

    if not local_llm:  # asyncio's own runner: anyio's backend loads at its first use, after the workers start
        return asyncio.run(turn(None))
    import anyio
    from mrpvm.shells.cli.common import run_with_local_llm

    return anyio.run(run_with_local_llm, turn, local_llm)


async def load_sources(
    ctx: KernelContext, session_id: str, sources: list[Path], texts: list[str], *, defer_notices: bool = False
) -> int:
    """Load `--source` files into the session as context units; returns how many were added.
    `defer_notices`: the kb-plugins hear of them right before their next call (a one-turn process)."""
    from mrpvm.knowledge.ingest import load_session_context

    added = 0
    for path, text in zip(sources, texts, strict=True):
        loaded = await load_session_context(ctx, session_id, text, path.name, defer_notices=defer_notices)
        added += len(loaded)
        for warning in getattr(loaded, "warnings", []) or []:
            sys.stderr.write(f"mrpvm: warning: {warning}\n")
    return added
