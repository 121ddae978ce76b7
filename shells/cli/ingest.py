"""`mrpvm ingest`, `mrpvm kb list|create|show|rm`, `mrpvm session list|show`: thin commands over the store.

`kb` and `session` open only the SQLite store; `ingest` opens the whole kernel context (it calls plugins).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from mrpvm.shells.cli.common import LocalLLMFlag

if TYPE_CHECKING:
    from mrpvm.kernel.store import Store

kb_app = typer.Typer(help="KB repositories: list, create, show, remove.", no_args_is_help=True)
session_app = typer.Typer(help="Chat sessions: list, show.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.add_typer(kb_app, name="kb")
    app.add_typer(session_app, name="session")


# --------------------------------------------------------------------------- helpers


def _open_store() -> Store:
    from mrpvm.kernel.config import ConfigError as LoaderConfigError
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.errors import ConfigError
    from mrpvm.kernel.store import Store

    try:
        config, _ = load_config()
    except LoaderConfigError as err:
        raise ConfigError(str(err)) from None
    return Store.open(Path(config.home))


def _err_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


# --------------------------------------------------------------------------- ingest


def ingest(
    files: Annotated[
        list[Path], typer.Argument(help="Text or Markdown files to ingest.", show_default=False)
    ],
    kb: Annotated[str, typer.Option("--kb", help="KB repository name (created if it does not exist).")],
    sd: Annotated[
        str, typer.Option("--sd", help="The sd-plugin that turns each source into a KU tree.")
    ] = "sd-symbolic",
    force: Annotated[
        bool, typer.Option("--force", help="Re-ingest even when a source's text is unchanged.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object with every source's result.")
    ] = False,
    local_llm: LocalLLMFlag = False,
) -> int:
    """Ingest files into a KB: chunk, normalize into a KU tree, store (one transaction per source), index."""
    import anyio
    from mrpvm.shells.cli.common import CliError, read_text_file, run_with_local_llm

    names: dict[str, Path] = {}
    for path in files:
        if path.name in names:
            raise CliError(
                f"two files are both named '{path.name}' ({names[path.name]} and {path}); a KB names sources by file name"
            )
        names[path.name] = path
    texts = {path: read_text_file(path) for path in files}

    async def work(environ: dict[str, str] | None) -> int:
        return await _ingest(texts, kb, sd, force, as_json, environ)

    return anyio.run(run_with_local_llm, work, local_llm)


async def _ingest(
    texts: dict[Path, str], kb_name: str, sd: str, force: bool, as_json: bool, environ: dict[str, str] | None
) -> int:
    from mrpvm.kernel.config import ConfigError as LoaderConfigError
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.errors import ConfigError, KbNotFound, KernelError
    from mrpvm.kernel.ingest import check_sd_plugin, ingest_source
    from mrpvm.shells.cli.common import print_json, stdout_console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    try:
        ctx = await KernelContext.open(environ)
    except LoaderConfigError as err:
        raise ConfigError(str(err)) from None
    out = stdout_console()
    err_console = _err_console()
    results: list[dict[str, Any]] = []
    failed = 0
    try:
        check_sd_plugin(ctx, sd)  # before creating the KB: a typo must not leave an empty KB behind
        try:
            kb = ctx.store.get_kb(kb_name)
        except KbNotFound:
            kb = ctx.store.create_kb(kb_name)
            if not as_json:
                out.print(f"created KB '{kb.name}' ({kb.id})")
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=24),
            DownloadColumn(),
            TextColumn("{task.fields[units]} units  {task.fields[rate]}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=False,
            disable=as_json or not err_console.is_terminal,
        )
        with progress:
            for path, text in texts.items():
                size = len(text.encode("utf-8", "surrogatepass"))
                task = progress.add_task(path.name, total=size or 1, units=0, rate="")
                started = time.perf_counter()
                state = {"units": 0, "bytes": 0}

                def show(task: Any = task, started: float = started, state: dict = state) -> None:
                    elapsed = max(1e-6, time.perf_counter() - started)
                    rate = f"{state['units'] / elapsed:,.0f}/s"
                    progress.update(task, completed=state["bytes"], units=state["units"], rate=rate)

                def on_units(n: int, state: dict = state, show: Any = show) -> None:
                    state["units"] = n
                    show()

                def on_progress(done: int, total: int, state: dict = state, show: Any = show) -> None:
                    state["bytes"] = done
                    show()

                try:
                    result = await ingest_source(
                        ctx,
                        kb,
                        path.name,
                        text,
                        sd_plugin=sd,
                        force=force,
                        progress=on_progress,
                        on_units=on_units,
                    )
                except KernelError as err:
                    failed += 1
                    progress.update(task, description=f"{path.name} [red]failed[/]")
                    results.append({"file": str(path), "error": err.to_dict()})
                    if not as_json:
                        err_console.print(
                            f"mrpvm: error: {path}: {err.code}: {' '.join(err.message.split())}",
                            markup=False,
                            highlight=False,
                            soft_wrap=True,
                        )
                    continue
                seconds = time.perf_counter() - started
                progress.update(task, completed=size or 1, units=result.unitCount)
                results.append(
                    {
                        "file": str(path),
                        "sourceId": result.id,
                        "name": result.name,
                        "unchanged": result.unchanged,
                        "units": result.unitCount,
                        "chunks": result.chunks,
                        "bytes": result.bytes,
                        "seconds": round(seconds, 3),
                        "notified": result.notified,
                        "warnings": result.warnings,
                    }
                )
                if as_json:
                    continue
                if result.unchanged:
                    out.print(
                        f"unchanged: {path.name} is already in KB '{kb.name}' with the same text "
                        f"({result.unitCount} units); use --force to re-ingest"
                    )
                else:
                    rate = result.unitCount / seconds if seconds > 0 else 0.0
                    out.print(
                        f"ingested {path.name} into KB '{kb.name}': {result.unitCount} units from "
                        f"{_human_bytes(result.bytes)} in {result.chunks} part(s), {seconds:.2f} s ({rate:,.0f} units/s)"
                    )
                for warning in result.warnings:
                    err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
        if as_json:
            print_json({"kb": {"id": kb.id, "name": kb.name}, "sources": results, "failed": failed})
    finally:
        await ctx.aclose()
    return 1 if failed else 0


# --------------------------------------------------------------------------- kb


@kb_app.command("list")
def kb_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List KB repositories with their source and unit counts."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with _open_store() as store:
        rows = [
            {"id": kb.id, "name": kb.name, "createdAt": kb.createdAt, **store.kb_stats(kb.id)}
            for kb in store.list_kbs()
        ]
    if as_json:
        print_json({"kbs": rows})
        return
    from rich import box
    from rich.table import Table

    console = stdout_console()
    if not rows:
        console.print("no KB repositories yet: `mrpvm kb create NAME` or `mrpvm ingest FILE --kb NAME`")
        return
    table = Table(title=f"KB repositories ({len(rows)})", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("name", "id", "sources", "units", "created"):
        table.add_column(column, justify="right" if column in ("sources", "units") else "left")
    for row in rows:
        table.add_row(row["name"], row["id"], str(row["sources"]), str(row["units"]), row["createdAt"])
    console.print(table)


@kb_app.command("create")
def kb_create(
    name: Annotated[str, typer.Argument(help="A unique name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Create an empty KB repository (a random id is assigned)."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with _open_store() as store:
        kb = store.create_kb(name)
    if as_json:
        print_json({"id": kb.id, "name": kb.name, "createdAt": kb.createdAt})
    else:
        stdout_console().print(f"created KB '{kb.name}' ({kb.id})")


@kb_app.command("show")
def kb_show(
    name: Annotated[str, typer.Argument(help="KB name or id.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: id, name, sources, units, sourceList.")
    ] = False,
) -> None:
    """Show a KB repository: its id, sources and unit counts."""
    import msgspec
    from mrpvm.shells.cli.common import print_json, stdout_console

    with _open_store() as store:
        kb = store.get_kb(name)
        stats = store.kb_stats(kb.id)
        sources = store.list_sources(kb.id)
    if as_json:
        print_json(
            {
                "id": kb.id,
                "name": kb.name,
                "createdAt": kb.createdAt,
                "sources": stats["sources"],
                "units": stats["units"],
                "sourceList": [msgspec.to_builtins(s) for s in sources],
            }
        )
        return
    from rich import box
    from rich.table import Table

    console = stdout_console()
    console.print(f"KB '{kb.name}'  id {kb.id}  created {kb.createdAt}")
    console.print(f"{stats['sources']} source(s), {stats['units']} unit(s)")
    if sources:
        table = Table(box=box.SIMPLE_HEAD)
        for column in ("source", "id", "units", "size", "ingested", "sha256"):
            table.add_column(column, justify="right" if column in ("units", "size") else "left")
        for s in sources:
            table.add_row(s.name, s.id, str(s.unitCount), _human_bytes(s.bytes), s.ingestedAt, s.hash[:12])
        console.print(table)


@kb_app.command("rm")
def kb_rm(name: Annotated[str, typer.Argument(help="KB name or id.")]) -> None:
    """Remove a KB repository, its sources, units and plugin artifacts (sessions mounting it keep running without it)."""
    from mrpvm.kernel.ingest import delete_kb
    from mrpvm.shells.cli.common import stdout_console

    with _open_store() as store:
        artifacts = store.path.parent / "artifacts"
        had_artifacts = any(artifacts.glob(f"{store.get_kb(name).id}/*"))
        kb = delete_kb(store, store.path.parent, name)
    stats_note = " and its plugin artifacts" if had_artifacts else ""
    stdout_console().print(f"removed KB '{kb.name}' ({kb.id}){stats_note}")


# --------------------------------------------------------------------------- sessions


def _session_row(store: Store, record: Any) -> dict[str, Any]:
    import msgspec

    kb_name = None
    if record.kbId:
        kb = store.find_kb(record.kbId)
        kb_name = kb.name if kb else None
    return {
        "id": record.id,
        "kbId": record.kbId,
        "kbName": kb_name,
        "turns": record.turnCount,
        "preferences": msgspec.to_builtins(record.preferences),
        "createdAt": record.createdAt,
        "updatedAt": record.updatedAt,
    }


@session_app.command("list")
def session_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List chat sessions."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with _open_store() as store:
        rows = [_session_row(store, s) for s in store.list_sessions()]
    if as_json:
        print_json({"sessions": rows})
        return
    from rich import box
    from rich.table import Table

    console = stdout_console()
    if not rows:
        console.print("no sessions yet: `mrpvm chat` or `mrpvm ask` starts one")
        return
    table = Table(title=f"Sessions ({len(rows)})", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("id", "KB", "turns", "preferences", "updated"):
        table.add_column(column, justify="right" if column == "turns" else "left")
    for row in rows:
        prefs = ", ".join(f"{k}={v}" for k, v in row["preferences"].items()) or "-"
        table.add_row(row["id"], row["kbName"] or "-", str(row["turns"]), prefs, row["updatedAt"])
    console.print(table)


@session_app.command("show")
def session_show(
    session_id: Annotated[str, typer.Argument(help="Session id.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: the session, its turns and unit count.")
    ] = False,
) -> None:
    """Show a session: its KB, preferences, committed units and turns."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with _open_store() as store:
        record = store.get_session(session_id)
        row = _session_row(store, record)
        units = store.session_units(session_id)
        turns = store.list_turns(session_id)
    turn_rows = [
        {
            "turnIndex": t.turnIndex,
            "requestId": t.requestId,
            "status": t.status,
            "userMessage": t.userMessage,
            "pluginIds": t.pluginIds,
            "llmCalls": t.llmCalls,
            "durationMs": t.durationMs,
            "createdAt": t.createdAt,
        }
        for t in turns
    ]
    if as_json:
        print_json({**row, "units": len(units), "turnList": turn_rows})
        return
    from rich import box
    from rich.table import Table

    console = stdout_console()
    prefs = ", ".join(f"{k}={v}" for k, v in row["preferences"].items()) or "none"
    kb = f"{row['kbName']} ({row['kbId']})" if row["kbId"] else "none"
    console.print(f"session {record.id}  KB {kb}  created {record.createdAt}")
    console.print(f"preferences: {prefs}; {len(units)} committed unit(s); {len(turns)} turn(s)")
    if turn_rows:
        table = Table(box=box.SIMPLE_HEAD)
        for column in ("#", "request", "status", "message", "LLM", "ms"):
            table.add_column(column, justify="right" if column in ("#", "LLM", "ms") else "left")
        for t in turn_rows:
            message = " ".join(t["userMessage"].split())
            table.add_row(
                str(t["turnIndex"]),
                t["requestId"],
                t["status"],
                message if len(message) <= 70 else message[:69] + "…",
                str(t["llmCalls"]),
                f"{t['durationMs']:.0f}",
            )
        console.print(table)
