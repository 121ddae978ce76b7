"""`mrpvm kb list|create|show|rm|check`: KB repositories (all but `check` open only the SQLite store)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from mrpvm.shells.cli.common import command_group, human_bytes, open_store

kb_app = command_group(
    "KB repositories: list, create, show, remove, check, remove a source, export, import, fork."
)


def register(app: typer.Typer) -> None:
    app.add_typer(kb_app, name="kb")


@kb_app.command("list")
def kb_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List KB repositories with their source and unit counts."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with open_store() as store:
        rows: list[dict[str, Any]] = [
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

    with open_store() as store:
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

    with open_store() as store:
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
            table.add_row(s.name, s.id, str(s.unitCount), human_bytes(s.bytes), s.ingestedAt, s.hash[:12])
        console.print(table)


@kb_app.command("rm")
def kb_rm(name: Annotated[str, typer.Argument(help="KB name or id.")]) -> None:
    """Remove a KB repository, its sources, units and plugin artifacts (sessions mounting it keep running without it)."""
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.disk_space import free_kb_artifacts
    from mrpvm.kernel.errors import DiskFull
    from mrpvm.kernel.store import DB_NAME
    from mrpvm.knowledge.ops import delete_kb
    from mrpvm.shells.cli.common import stdout_console

    freed = False
    try:
        store = open_store()
    except DiskFull:  # the database cannot even open: the KB's indexes go first, to make room
        home = Path(load_config()[0].home)
        freed = free_kb_artifacts(home, home / DB_NAME, name)
        if not freed:
            raise
        store = open_store()
    with store:
        artifacts = store.home / "artifacts"
        had_artifacts = freed or any(artifacts.glob(f"{store.get_kb(name).id}/*"))
        kb = delete_kb(store, store.home, name)
    stats_note = " and its plugin artifacts" if had_artifacts else ""
    stdout_console().print(f"removed KB '{kb.name}' ({kb.id}){stats_note}")


# --------------------------------------------------------------------------- lifecycle (knowledge/ops.py)


@kb_app.command("rm-source")
def kb_rm_source(
    name: Annotated[str, typer.Argument(help="KB name or id.")],
    source: Annotated[str, typer.Argument(help="Source name or id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Remove one source from a KB: its units go, and the kb-plugins drop it from their indexes."""
    from mrpvm.knowledge import ops as kb_ops
    from mrpvm.shells.cli.common import report, with_kernel

    async def work(ctx):
        kb = ctx.store.get_kb(name)
        record, warnings = await kb_ops.remove_source(ctx, kb, source)
        return kb, record, warnings

    kb, record, warnings = with_kernel(work)
    report(
        {"kb": kb, "removed": record, "warnings": warnings},
        f"removed source '{record.name}' ({record.unitCount} units) from KB '{kb.name}'",
        warnings,
        as_json,
    )


@kb_app.command("export")
def kb_export(
    name: Annotated[str, typer.Argument(help="KB name or id.")],
    file: Annotated[Path, typer.Argument(help="The archive to write (a zip; '-' for stdout).")],
) -> None:
    """Export a KB as one portable archive: its sources' units and texts (plugin indexes are rebuilt on import)."""
    from mrpvm.knowledge import archive as kb_archive
    from mrpvm.shells.cli.common import CliError, human_bytes, stdout_console, with_kernel

    async def work(ctx):
        return kb_archive.export_kb(ctx, name)

    kb, data = with_kernel(work)
    if str(file) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        file.write_bytes(data)
    except OSError as err:
        raise CliError(f"cannot write {file}: {err.strerror}") from None
    # the report goes to stdout, as `kb import`'s does (stderr only when the archive itself is on stdout)
    stdout_console().print(f"exported KB '{kb.name}' to {file} ({human_bytes(len(data))})", markup=False)


@kb_app.command("import")
def kb_import(
    file: Annotated[Path, typer.Argument(help="An archive written by `mrpvm kb export`.")],
    kb: Annotated[
        str | None, typer.Option("--kb", help="The new KB's name (default: the archived name).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Import a KB archive as a new KB; every kb-plugin indexes its sources."""
    from mrpvm.knowledge import archive as kb_archive
    from mrpvm.shells.cli.common import read_file_bytes, report, with_kernel

    data = read_file_bytes(file, "archive")

    async def work(ctx):
        return await kb_archive.import_kb(ctx, data, kb)

    from mrpvm.kernel.errors import KbExists
    from mrpvm.shells.cli.common import CliError

    try:
        result = with_kernel(work)
    except KbExists as err:
        taken = err.details.get("name") or kb or "NAME"
        raise CliError(
            f"KB_EXISTS: {err.message}; import it under another name with --kb NEW_NAME "
            f"(or remove the existing one first: mrpvm kb rm {taken})"
        ) from None
    units = sum(s.unitCount for s in result.sources)
    summary = (
        f"imported KB '{result.kb.name}' ({result.kb.id}): {len(result.sources)} source(s), {units} unit(s)"
    )
    report(result, summary, result.warnings, as_json)


@kb_app.command("fork")
def kb_fork(
    name: Annotated[str, typer.Argument(help="KB name or id to copy.")],
    new_name: Annotated[str, typer.Argument(help="The copy's name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Copy a KB (every source's units and text) under a new name; the kb-plugins index the copy."""
    from mrpvm.knowledge import ops as kb_ops
    from mrpvm.shells.cli.common import report, with_kernel

    async def work(ctx):
        return await kb_ops.fork_kb(ctx, name, new_name)

    copy, sources, warnings = with_kernel(work)
    report(
        {"kb": copy, "sources": sources, "warnings": warnings},
        f"forked KB '{name}' as '{copy.name}' ({copy.id}): {len(sources)} source(s)",
        warnings,
        as_json,
    )


@kb_app.command("check")
def kb_check(
    name: Annotated[str, typer.Argument(help="KB name or id.")],
    repair: Annotated[
        bool,
        typer.Option(
            "--repair/--no-repair", help="Offer what an index owes again (default), or only report."
        ),
    ] = True,
    full: Annotated[
        bool, typer.Option("--full", help="With --repair: re-index every source in every kb-plugin.")
    ] = False,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete",
            help="With --repair: offer a source a kb-plugin indexed in part until it is whole "
            "(kb-balanced's dense view of a large source: about a minute per 3,000 units on 2 cores).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Check that every kb-plugin's index holds every source of a KB (and none it removed); repair it.
    A source indexed in part (searchable; its index is completed when offered again) is listed as partial.
    An index in a format its kb-plugin no longer declares (manifest indexFormat), or whose folder is gone,
    is listed; the repair drops and rebuilds it.

    Exit codes: 0 all is well (after the repair, when repairing); 1 something is still owed or the store
    is inconsistent; 2 bad usage or no such KB.
    """
    import asyncio

    from mrpvm.shells.cli.common import CliError

    if (full or complete) and not repair:
        raise CliError("--full and --complete re-index, so they need --repair (drop --no-repair)")
    raise typer.Exit(asyncio.run(_check(name, repair=repair, full=full, complete=complete, as_json=as_json)))


async def _check(name: str, *, repair: bool, full: bool, complete: bool, as_json: bool) -> int:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.knowledge.reindex import check_kb
    from mrpvm.shells.cli.common import print_json

    # No repair at open: the report must show what is owed, and --no-repair must change nothing.
    ctx = await KernelContext.open()
    try:
        report = await check_kb(ctx, name, repair=repair, full=full, complete=complete)
    finally:
        await ctx.aclose()
    if as_json:
        print_json(report)
    else:
        _print_check(report, repair=repair, full=full)
    return 0 if report.ok else 1


def _print_check(report: Any, *, repair: bool, full: bool) -> None:
    from mrpvm.shells.cli.common import stdout_console
    from rich import box
    from rich.table import Table

    console = stdout_console()
    kb = report.kb
    plugins = ", ".join(report.plugins) or "none (no enabled kb-plugin indexes sources)"
    console.print(
        f"KB '{kb.name}' ({kb.id}) on node {report.node}: {len(report.sources)} source(s); kb-plugins: {plugins}"
    )
    if report.sources:
        table = Table(box=box.SIMPLE_HEAD)
        for column in ("source", "units", "indexed by", "missing"):
            table.add_column(column, justify="right" if column == "units" else "left", overflow="fold")
        for state in report.sources:
            units = str(state.storedUnits)
            if state.storedUnits != state.unitCount:
                units = f"{state.storedUnits} (recorded {state.unitCount})"
            missing = [f"{p} (partial)" if p in state.partial else p for p in state.missing]
            table.add_row(state.name, units, ", ".join(state.acknowledged) or "-", ", ".join(missing) or "-")
        console.print(table)
    for removal in report.pendingRemovals:
        console.print(
            f"removed source '{removal.sourceName}' still in the index of: {', '.join(removal.plugins)}"
        )
    for problem in report.problems:
        console.print(f"problem: {problem}")
    for stale in report.staleIndexes:
        console.print(f"index to rebuild: {stale}")
    repaired = report.repaired
    if repaired is not None:
        for line in repaired.rebuilt:
            console.print(f"index dropped to be rebuilt: {line}")
        what = "re-indexed" if full else "offered again"
        for line in repaired.offered:
            console.print(f"{what}: {line}")
        for line in repaired.removed:
            console.print(f"removal offered again: {line}")
        for warning in repaired.warnings:
            console.print(f"warning: {warning}")
        if not (repaired.offered or repaired.removed):
            console.print("repair: nothing was owed")
    if report.ok:
        console.print(
            "OK: every kb-plugin's index holds every source"
            + (" (after the repair)" if repaired and (repaired.offered or repaired.removed) else "")
            + f" on node {report.node}"
        )
        if report.partial:
            console.print(
                f"in part (searchable; the rest is built when offered again, `mrpvm kb check {kb.name} "
                f"--complete` builds it now): {'; '.join(report.partial)}"
            )
    elif repair:
        console.print(
            "NOT OK: the repair left something owed (see above); run it again, or check the plugins with `mrpvm plugin check`"
        )
    else:
        console.print(
            "NOT OK: something is owed; `mrpvm kb check " + kb.name + "` (without --no-repair) repairs it"
        )


# --------------------------------------------------------------------------- sessions
