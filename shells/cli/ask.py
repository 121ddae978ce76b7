"""`mrpvm ask`: one question, one turn (optionally with `--source` files loaded into its session)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from mrpvm.kernel.budgets import MAX_DELIBERATION
from mrpvm.shells.cli.common import LocalLLMFlag

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.engine import TurnResult


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)


def ask(
    question: Annotated[str, typer.Argument(help="The question (one turn).")],
    source: Annotated[
        list[Path] | None,
        typer.Option("--source", help="A file loaded into the session as context (repeatable)."),
    ] = None,
    kb: Annotated[str | None, typer.Option("--kb", help="Mount this KB (name or id).")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Continue this session.")] = None,
    planner: Annotated[str | None, typer.Option("--planner", help="Pin the planner.")] = None,
    sd: Annotated[str | None, typer.Option("--sd", help="Pin the seed detector.")] = None,
    kb_plugin: Annotated[str | None, typer.Option("--kb-plugin", help="Pin the kb-plugin.")] = None,
    gs: Annotated[str | None, typer.Option("--gs", help="Pin the goal solver.")] = None,
    max_llm_calls: Annotated[
        int | None, typer.Option("--max-llm-calls", min=0, help="LLM-call budget for this turn.")
    ] = None,
    processing_mode: Annotated[
        str | None,
        typer.Option("--processing-mode", help="Legacy: symbolic-only or llm-assisted (pins sd + gs)."),
    ] = None,
    retrieval_profile: Annotated[
        str | None,
        typer.Option(
            "--retrieval-profile", help="Legacy: fast, balanced or thinkingdb (pins the kb-plugin)."
        ),
    ] = None,
    deliberation_level: Annotated[
        int | None,
        typer.Option(
            "--deliberation-level",
            min=0,
            max=MAX_DELIBERATION,
            help="Compare up to N more candidate answers per question and keep the best (0-3).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the turn as one JSON object.")] = False,
    local_llm: LocalLLMFlag = False,
) -> None:
    """Ask one question: seeds, plan, retrieval, solving and validation, then print the answer."""
    import anyio
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.knowledge.context import open_context
    from mrpvm.protocol.envelope import Pins
    from mrpvm.shells.cli.common import CliError, print_json, run_with_local_llm

    if not question.strip():
        raise CliError("the question is empty")
    sources = list(source or [])
    texts = [read_source(p) for p in sources]
    from mrpvm.shells.legacy import legacy_pins

    legacy = legacy_pins(processing_mode, retrieval_profile)  # explicit --sd/--kb-plugin/--gs win
    pins = Pins(
        planner=planner,
        sd=sd or legacy.get("sd"),
        kb=kb_plugin or legacy.get("kb"),
        gs=gs or legacy.get("gs"),
    )

    async def turn(environ: dict[str, str] | None) -> TurnResult:
        ctx = await open_context(environ)
        try:
            session_id = session
            if sources:
                if session_id is None:
                    session_id = ctx.store.create_session(kb_id=kb).id
                await load_sources(ctx, session_id, sources, texts)
            request = TurnRequest(
                message=question,
                session_id=session_id,
                kb=kb,
                pins=pins,
                max_llm_calls=max_llm_calls,
                deliberation_level=deliberation_level,
            )
            return await run_turn(ctx, request)
        finally:
            await ctx.aclose()

    result = anyio.run(run_with_local_llm, turn, local_llm)
    if as_json:
        from mrpvm.shells.legacy import derived_legacy

        legacy_echo = derived_legacy(result.seed_detector_plugin, result.kb_plugin, result.goal_solver_plugin)
        print_json({**result.as_json(), **legacy_echo, "deliberation_level": result.deliberation_level})
    else:
        print_answer(result)


# --------------------------------------------------------------------------- shared with `chat`


def read_source(path: Path) -> str:
    """A `--source` file's text, or a one-line CliError."""
    from mrpvm.shells.cli.common import read_text_file

    return read_text_file(path, "source file")


async def load_sources(ctx: KernelContext, session_id: str, sources: list[Path], texts: list[str]) -> int:
    """Load `--source` files into the session as context units; returns how many were added."""
    from mrpvm.knowledge.ingest import load_session_context

    added = 0
    for path, text in zip(sources, texts, strict=True):
        loaded = await load_session_context(ctx, session_id, text, path.name)
        added += len(loaded)
        for warning in getattr(loaded, "warnings", []) or []:
            sys.stderr.write(f"mrpvm: warning: {warning}\n")
    return added


def print_answer(result: TurnResult, *, footer: bool = True) -> None:
    """The answer's Markdown (rendered on a terminal), and a one-line status footer on stderr."""
    from mrpvm.shells.cli.common import stdout_console

    console = stdout_console()
    if console.is_terminal:
        from rich.markdown import Markdown

        console.print(Markdown(result.response_markdown))
    else:
        sys.stdout.write(result.response_markdown)
        sys.stdout.flush()
    if footer:
        sys.stderr.write(
            f"[{result.status}] request {result.request_id} · session {result.session_id} · "
            f"{result.duration_ms:.0f} ms · {result.llm_calls} LLM calls\n"
        )
