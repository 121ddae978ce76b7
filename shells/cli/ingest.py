"""`mrpvm ingest FILE... --kb NAME`: chunk, normalize into a KU tree, store and index, with progress."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from mrpvm.shells.cli.common import LocalLLMFlag, human_bytes

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.records import KbRecord
    from rich.console import Console
    from rich.progress import Progress


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


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


@dataclass(slots=True)
class _Display:
    """Where an ingest reports: results on stdout, progress and warnings on stderr (none with --json)."""

    out: Console
    err: Console
    progress: Progress
    as_json: bool


async def _ingest(
    texts: dict[Path, str], kb_name: str, sd: str, force: bool, as_json: bool, environ: dict[str, str] | None
) -> int:
    from mrpvm.kernel.errors import KbNotFound
    from mrpvm.knowledge.context import open_context
    from mrpvm.knowledge.ingest import check_sd_plugin
    from mrpvm.knowledge.ops import delete_kb
    from mrpvm.shells.cli.common import print_json, stdout_console
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    ctx = await open_context(environ)
    err_console = Console(stderr=True, highlight=False)
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
    show = _Display(stdout_console(), err_console, progress, as_json)
    results: list[dict[str, Any]] = []
    try:
        check_sd_plugin(ctx, sd)  # before creating the KB: a typo must not leave an empty KB behind
        created = False
        try:
            kb = ctx.store.get_kb(kb_name)
        except KbNotFound:
            kb, created = ctx.store.create_kb(kb_name), True
            if not as_json:
                show.out.print(f"created KB '{kb.name}' ({kb.id})")
        with progress:
            for path, text in texts.items():
                results.append(await _ingest_file(ctx, kb, path, text, sd, force, show))
        failed = sum(1 for r in results if "error" in r)
        if created and failed == len(results) and not ctx.store.list_sources(kb.id):
            delete_kb(
                ctx.store, ctx.home, kb.id
            )  # nothing got in: no empty KB is left behind to answer nothing
            if not as_json:
                show.err.print(f"removed the KB '{kb.name}' this ingest created: no source could be added")
        if as_json:
            print_json({"kb": {"id": kb.id, "name": kb.name}, "sources": results, "failed": failed})
    finally:
        await ctx.aclose()
    return 1 if failed else 0


async def _ingest_file(
    ctx: KernelContext, kb: KbRecord, path: Path, text: str, sd: str, force: bool, show: _Display
) -> dict[str, Any]:
    """Ingest one file with a progress bar; its JSON record (`error` when it failed)."""
    from mrpvm.kernel.errors import KernelError
    from mrpvm.knowledge.ingest import ingest_source

    progress = show.progress
    size = len(text.encode("utf-8", "surrogatepass"))
    task = progress.add_task(path.name, total=size or 1, units=0, rate="")
    started = time.perf_counter()
    seen = {"units": 0, "bytes": 0}

    def update() -> None:
        elapsed = max(1e-6, time.perf_counter() - started)
        rate = f"{seen['units'] / elapsed:,.0f}/s"
        progress.update(task, completed=seen["bytes"], units=seen["units"], rate=rate)

    def on_units(n: int) -> None:
        seen["units"] = n
        update()

    def on_progress(done: int, total: int) -> None:
        seen["bytes"] = done
        update()

    try:
        result = await ingest_source(
            ctx, kb, path.name, text, sd_plugin=sd, force=force, progress=on_progress, on_units=on_units
        )
    except KernelError as err:
        progress.update(task, description=f"{path.name} [red]failed[/]")
        if not show.as_json:
            message = f"mrpvm: error: {path}: {err.code}: {' '.join(err.message.split())}"
            show.err.print(message, markup=False, highlight=False, soft_wrap=True)
        return {"file": str(path), "error": err.to_dict()}
    seconds = time.perf_counter() - started
    progress.update(task, completed=size or 1, units=result.unitCount)
    if not show.as_json:
        if result.unchanged:
            show.out.print(
                f"unchanged: {path.name} is already in KB '{kb.name}' with the same text "
                f"({result.unitCount} units); use --force to re-ingest"
            )
        else:
            rate = result.unitCount / seconds if seconds > 0 else 0.0
            show.out.print(
                f"ingested {path.name} into KB '{kb.name}': {result.unitCount} units from "
                f"{human_bytes(result.bytes)} in {result.chunks} part(s), {seconds:.2f} s ({rate:,.0f} units/s)"
            )
        for warning in result.warnings:
            show.err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    return {
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
