"""`mrpvm ask`, `mrpvm chat`, `mrpvm trace`, `mrpvm config show`: thin commands over the engine and store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from mrpvm.shells.cli.common import LocalLLMFlag

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

config_app = typer.Typer(help="Show the effective configuration.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
    app.command("chat")(chat)
    app.command("trace")(trace)
    app.add_typer(config_app, name="config")


# --------------------------------------------------------------------------- shared


async def open_context(environ: dict[str, str] | None = None) -> KernelContext:
    """A KernelContext with configuration errors turned into the kernel's one-line error."""
    from mrpvm.kernel.config import ConfigError as LoaderConfigError
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.errors import ConfigError

    try:
        return await KernelContext.open(environ)
    except LoaderConfigError as err:
        raise ConfigError(str(err)) from None


def _read_source(path: Path) -> str:
    from mrpvm.shells.cli.common import read_text_file

    return read_text_file(path, "source file")


async def _load_sources(ctx: KernelContext, session_id: str, sources: list[Path], texts: list[str]) -> int:
    from mrpvm.kernel.ingest import load_session_context

    added = 0
    for path, text in zip(sources, texts, strict=True):
        loaded = await load_session_context(ctx, session_id, text, path.name)
        added += len(loaded)
        for warning in getattr(loaded, "warnings", []) or []:
            sys.stderr.write(f"mrpvm: warning: {warning}\n")
    return added


def _print_answer(result: Any, *, footer: bool = True) -> None:
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


# --------------------------------------------------------------------------- ask


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
    as_json: Annotated[bool, typer.Option("--json", help="Print the turn as one JSON object.")] = False,
    local_llm: LocalLLMFlag = False,
) -> None:
    """Ask one question: seeds, plan, retrieval, solving and validation, then print the answer."""
    import anyio
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.protocol.envelope import Pins
    from mrpvm.shells.cli.common import CliError, print_json, run_with_local_llm

    if not question.strip():
        raise CliError("the question is empty")
    sources = list(source or [])
    texts = [_read_source(p) for p in sources]
    pins = Pins(planner=planner, sd=sd, kb=kb_plugin, gs=gs)

    async def turn(environ: dict[str, str] | None) -> Any:
        ctx = await open_context(environ)
        try:
            session_id = session
            if sources:
                if session_id is None:
                    session_id = ctx.store.create_session(kb_id=kb).id
                await _load_sources(ctx, session_id, sources, texts)
            request = TurnRequest(
                message=question, session_id=session_id, kb=kb, pins=pins, max_llm_calls=max_llm_calls
            )
            return await run_turn(ctx, request)
        finally:
            await ctx.aclose()

    result = anyio.run(run_with_local_llm, turn, local_llm)
    if as_json:
        print_json(result.as_json())
    else:
        _print_answer(result)


# --------------------------------------------------------------------------- chat


def chat(
    session: Annotated[str | None, typer.Option("--session", help="Continue this session.")] = None,
    source: Annotated[
        list[Path] | None,
        typer.Option("--source", help="A file loaded into the session as context (repeatable)."),
    ] = None,
    kb: Annotated[
        str | None, typer.Option("--kb", help="Mount this KB (name or id) for a new session.")
    ] = None,
    local_llm: LocalLLMFlag = False,
) -> None:
    """A REPL keeping one session across turns; EOF (Ctrl-D) or `exit` ends it."""
    import anyio
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.kernel.errors import KernelError
    from mrpvm.shells.cli.common import run_with_local_llm

    sources = list(source or [])
    texts = [_read_source(p) for p in sources]

    async def go(environ: dict[str, str] | None) -> None:
        ctx = await open_context(environ)
        try:
            session_id = session or ctx.store.create_session(kb_id=kb).id
            ctx.store.get_session(session_id)
            if sources:
                added = await _load_sources(ctx, session_id, sources, texts)
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
                _print_answer(result)
        finally:
            await ctx.aclose()

    anyio.run(run_with_local_llm, go, local_llm)


# --------------------------------------------------------------------------- trace


def trace(
    request_id: Annotated[str, typer.Argument(help="The request id of a stored turn.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="tree | json | mermaid")] = "tree",
) -> None:
    """Show a turn's execution trace (the DAG of frames, seeds, plugin calls and backtracking)."""
    from mrpvm.kernel.config import ConfigError as LoaderConfigError
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.errors import ConfigError
    from mrpvm.kernel.store import Store
    from mrpvm.kernel.trace import render_json, render_mermaid, render_tree
    from mrpvm.shells.cli.common import CliError, stdout_console

    if fmt not in ("tree", "json", "mermaid"):
        raise CliError(f"unknown format '{fmt}' (tree, json or mermaid)")
    try:
        config, _ = load_config()
    except LoaderConfigError as err:
        raise ConfigError(str(err)) from None
    store = Store.open(Path(config.home))
    try:
        turn = store.get_turn(request_id)
    finally:
        store.close()
    if not turn.trace:
        raise CliError(f"turn {request_id} has no stored trace", exit_code=1)
    if fmt == "json":
        sys.stdout.write(render_json(turn.trace) + "\n")
    elif fmt == "mermaid":
        sys.stdout.write(render_mermaid(turn.trace))
    else:
        stdout_console().print(render_tree(turn.trace))


# --------------------------------------------------------------------------- config


@config_app.command("show")
def config_show(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """The effective configuration and where each value came from (default, config file, environment)."""
    import msgspec
    from mrpvm.kernel.config import ConfigError as LoaderConfigError
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.errors import ConfigError
    from mrpvm.shells.cli.common import print_json, stdout_console

    try:
        config, sources = load_config()
    except LoaderConfigError as err:
        raise ConfigError(str(err)) from None
    flat = _flatten(msgspec.to_builtins(config))
    import os

    home_source = "env MRPVM_HOME" if os.environ.get("MRPVM_HOME") else "default (~/.mrpvm)"
    rows = [
        {"key": k, "value": v, "source": sources.get(k, home_source if k == "home" else "")}
        for k, v in flat.items()
    ]
    if as_json:
        print_json({"config": msgspec.to_builtins(config), "sources": {r["key"]: r["source"] for r in rows}})
        return
    from rich import box
    from rich.table import Table

    table = Table(title="MRP-VM effective configuration", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("key", "value", "source"):
        table.add_column(column, overflow="fold")
    for row in rows:
        value = row["value"]
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        table.add_row(row["key"], shown, row["source"])
    stdout_console().print(table)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
