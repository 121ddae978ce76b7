"""`mrpvm ingest PATH... --kb NAME`: files and folders chunked, normalized into KU trees, stored and indexed,
with one progress bar for the whole job (shells/cli/progress.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from mrpvm.shells.cli.common import LocalLLMFlag, human_bytes

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.records import KbRecord
    from mrpvm.kernel.supervisor import Supervisor
    from mrpvm.shells.cli.job_counts import JobCounts


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Text or Markdown files, or folders (read recursively; hidden and binary files skipped).",
            show_default=False,
            metavar="PATH...",
        ),
    ],
    kb: Annotated[str, typer.Option("--kb", help="KB repository name (created if it does not exist).")],
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include", help="In folders, ingest only files matching this glob ('*.md'; repeatable)."
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude", help="In folders, skip files matching this glob ('drafts/**'; repeatable)."
        ),
    ] = None,
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
    """Ingest files and folders into a KB: chunk, normalize into a KU tree, store (one transaction per
    source), index; one progress bar for the whole job."""
    import anyio
    from mrpvm.shells.cli.common import read_text_file, run_with_local_llm
    from mrpvm.shells.cli.source_files import select_sources

    selection = select_sources(paths, list(include or []), list(exclude or []))
    sources = [(f.name, f.path, read_text_file(f.path)) for f in selection.files]
    if selection.summary() and not as_json:
        sys.stderr.write(f"mrpvm: {selection.summary()}\n")

    async def work(environ: dict[str, str] | None) -> int:
        return await _ingest(sources, kb, sd, force, as_json, environ)

    return anyio.run(run_with_local_llm, work, local_llm)


async def _ingest(
    sources: list[tuple[str, Path, str]],
    kb_name: str,
    sd: str,
    force: bool,
    as_json: bool,
    environ: dict[str, str] | None,
) -> int:
    from mrpvm.kernel.errors import KbNotFound
    from mrpvm.knowledge.context import open_context
    from mrpvm.knowledge.normalize import check_sd_plugin
    from mrpvm.knowledge.ops import delete_kb
    from mrpvm.shells.cli.common import print_json

    # the sd-plugin's worker starts as soon as the context can start it: beside the rest of the opening
    # (the store's, one-time merges, the KB layer's repair), the progress bar's imports and the KB's lookup,
    # which its first call no longer follows (its start is on the critical path: the call waits for it)
    ctx = await open_context(
        environ,
        starting=lambda supervisor: _start_sd(supervisor, sd),
        opened=lambda opened: opened.supervisor.prestart(sd),  # started already, unless it uses an LLM
    )
    results: list[dict[str, Any]] = []
    try:
        sizes = [len(text.encode("utf-8", "surrogatepass")) for _, _, text in sources]
        job = _job(len(sources), sum(sizes), as_json)
        started = time.perf_counter()
        check_sd_plugin(ctx, sd)  # before creating the KB: a typo must not leave an empty KB behind
        created = False
        try:
            kb = ctx.store.get_kb(kb_name)
        except KbNotFound:
            kb, created = ctx.store.create_kb(kb_name), True
            if not as_json:
                job.say(f"created KB '{kb.name}' ({kb.id})")
        with job:
            for (name, path, text), size in zip(sources, sizes, strict=True):
                results.append(await _ingest_file(ctx, kb, name, path, text, size, sd, force, job, as_json))
        failed = sum(1 for r in results if "error" in r)
        if created and failed == len(results) and not ctx.store.list_sources(kb.id):
            delete_kb(
                ctx.store, ctx.home, kb.id
            )  # nothing got in: no empty KB is left behind to answer nothing
            if not as_json:
                job.warn(f"removed the KB '{kb.name}' this ingest created: no source could be added")
        if as_json:
            print_json({"kb": {"id": kb.id, "name": kb.name}, "sources": results, "failed": failed})
        elif len(results) > 1:
            seconds = time.perf_counter() - started
            changed = sum(1 for r in results if "error" not in r and not r["unchanged"])
            unchanged = sum(1 for r in results if r.get("unchanged"))
            job.say(
                f"{len(results)} files: {changed} ingested, {unchanged} unchanged, {failed} failed; "
                f"{job.units:,} units from {human_bytes(sum(sizes))} in {seconds:.1f} s"
            )
    finally:  # the process ends soon after: the workers' ends are left to the reaper, the store checkpoints
        await ctx.aclose(detach=True)
    return 1 if failed else 0


def _start_sd(supervisor: Supervisor, sd: str) -> None:
    """The sd-plugin's worker, started before the store opens, when it uses no LLM (an LLM plugin's worker
    would be retired when the context sets the LLM route: it starts from `opened`); anything unknown is
    left to the ingest, which reports it."""
    from mrpvm.kernel.errors import KernelError

    try:
        entry = supervisor.registry.get(sd, "sd-plugin")
    except KernelError:
        return
    if not entry.manifest.usesLLM:
        supervisor.prestart(sd)


def _job(files: int, total_bytes: int, as_json: bool) -> JobCounts:
    """The job's bar (progress.py), or its counts alone when no bar can be drawn (--json, stderr no
    terminal): such a run never loads rich."""
    from mrpvm.shells.cli.job_counts import JobCounts, bar_possible

    if as_json or not bar_possible():
        return JobCounts(files, total_bytes)
    from mrpvm.shells.cli.common import stdout_console
    from mrpvm.shells.cli.progress import JobProgress

    return JobProgress(files, total_bytes, out=stdout_console(), enabled=True)


async def _ingest_file(
    ctx: KernelContext,
    kb: KbRecord,
    name: str,
    path: Path,
    text: str,
    size: int,
    sd: str,
    force: bool,
    job: JobCounts,
    as_json: bool,
) -> dict[str, Any]:
    """Ingest one file, advancing the job's bar; its JSON record (`error` when it failed)."""
    from mrpvm.kernel.errors import KernelError
    from mrpvm.knowledge.ingest import ingest_source
    from mrpvm.protocol.gc_pause import paused_gc

    on_progress, on_units = job.file_callbacks(name)
    started = time.perf_counter()
    try:
        # one source at a time without the cyclic collector (protocol/gc_pause.py): its tree is acyclic,
        # and each young collection would walk its ~30 objects per unit again, on the critical path
        with paused_gc():
            result = await ingest_source(
                ctx,
                kb,
                name,
                text,
                sd_plugin=sd,
                force=force,
                progress=on_progress,
                on_units=on_units,
                on_phase=lambda phase: job.phase(name, phase),
            )
    except KernelError as err:
        job.file_done(size, 0)
        if not as_json:
            job.warn(f"mrpvm: error: {path}: {err.code}: {' '.join(err.message.split())}")
        return {"file": str(path), "name": name, "error": err.to_dict()}
    seconds = time.perf_counter() - started
    job.file_done(size, result.unitCount)
    if not as_json:
        if result.unchanged:
            job.say(
                f"unchanged: {name} is already in KB '{kb.name}' with the same text "
                f"({result.unitCount} units); use --force to re-ingest"
            )
        else:
            rate = result.unitCount / seconds if seconds > 0 else 0.0
            job.say(
                f"ingested {name} into KB '{kb.name}': {result.unitCount} units from "
                f"{human_bytes(result.bytes)} in {result.chunks} part(s), {seconds:.2f} s ({rate:,.0f} units/s)"
            )
        for warning in result.warnings:
            job.warn(f"warning: {warning}")
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
