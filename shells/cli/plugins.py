"""`mrpvm plugins`, `mrpvm plugin run`, `mrpvm plugin check`: thin commands over kernel modules."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from mrpvm.shells.cli.common import command_group

plugin_app = command_group("Run or check one plugin.")


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins)
    app.add_typer(plugin_app, name="plugin")


def plugins(
    plugin_type: Annotated[
        str | None,
        typer.Option("--type", "-t", help="Only this type (gs-plugin, or short: sd, plan, kb, gs, val)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: {plugins: [...], rejected: [...], warnings: [...]}.")
    ] = False,
) -> None:
    """List the registry: built-ins and allow-listed wrappers, and every manifest that was rejected."""
    from mrpvm.shells.plugin_tools.admin import normalize_type, open_registry, plugin_rows, rejections

    wanted = normalize_type(plugin_type)
    _, registry = open_registry()
    rows, rejected = plugin_rows(registry, wanted), rejections(registry)
    if as_json:
        from mrpvm.shells.cli.common import print_json

        print_json({"plugins": rows, "rejected": rejected, "warnings": registry.warnings})
        return
    from mrpvm.shells.cli.common import stdout_console
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"MRP-VM plugins ({len(rows)})", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("id", "type", "cost", "LLM", "mode", "description"):
        table.add_column(
            column, no_wrap=column != "description", min_width=30 if column == "description" else None
        )
    for row in rows:
        llm = "yes" if row.usesLLM else "no"
        ident = row.id if row.source == "builtin" else f"{row.id} ({row.source})"
        table.add_row(ident, row.type, row.costClass, llm, row.mode, row.description)
    console = stdout_console()
    console.print(table)
    if rejected:
        console.print(f"[bold yellow]{len(rejected)} manifest(s) rejected:[/]")
        for item in rejected:
            console.print(f"  [yellow]{escape(item.path)}[/]: {escape(item.reason)}", soft_wrap=True)
    for warning in registry.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)


def _build_first(spec: str, registry, *, force: bool = False) -> None:
    """Build a compiled plugin when its binary is missing or stale (plugin_tools/build.py); one line on
    stderr says so. A failed build is the command's error."""
    from mrpvm.shells.cli.common import CliError
    from mrpvm.shells.plugin_tools.admin import manifest_path_of
    from mrpvm.shells.plugin_tools.build import BuildError, build_plugin

    manifest_path = manifest_path_of(spec, registry)
    if manifest_path is None:
        return
    try:
        outcome = build_plugin(manifest_path, force=force)
    except BuildError as err:
        raise CliError(f"build failed: {err}", exit_code=1) from None
    if outcome is not None and outcome.built:
        sys.stderr.write(f"mrpvm: built {outcome.plugin} ({outcome.command}) in {outcome.seconds:.1f} s\n")
        sys.stderr.flush()


@plugin_app.command("new")
def plugin_new(
    name: Annotated[str, typer.Argument(help="The plugin id, also the folder's name.")],
    plugin_type: Annotated[
        str, typer.Option("--type", "-t", help="gs-plugin, kb-plugin, ... (or short: sd, plan, kb, gs, val).")
    ],
    lang: Annotated[str, typer.Option("--lang", "-l", help="python, node or go.")] = "python",
    folder: Annotated[
        Path, typer.Option("--dir", "-d", help="Where to create the folder NAME (default: here).")
    ] = Path("."),
) -> None:
    """Write a plugin folder (manifest, code, README, input.json) that passes `mrpvm plugin check`."""
    from mrpvm.shells.plugin_tools.admin import normalize_type
    from mrpvm.shells.plugin_tools.scaffold import new_plugin

    full_type = normalize_type(plugin_type)
    assert full_type is not None
    made = new_plugin(name, full_type, lang, folder)
    print(f"created {made.folder} ({made.lang} {made.type}): {', '.join(made.files)}")
    if made.built:
        print(f"built bin/{made.id} (rebuild after an edit: mrpvm plugin build {made.folder})")
    if made.note:
        print(f"note: {made.note}")
    print(f"try it:       {made.try_command}")
    print(f"              (by hand: {made.by_hand})")
    print(f"allowlist it: {made.allowlist_command}")


@plugin_app.command("build")
def plugin_build(
    plugin: Annotated[str, typer.Argument(help="A plugin id, or a folder holding manifest.json.")],
) -> None:
    """Build a compiled plugin (its manifest's `build`, e.g. go build): no shell, no network, sandboxed."""
    from mrpvm.shells.cli.common import CliError
    from mrpvm.shells.plugin_tools.admin import manifest_path_of, open_registry

    _, registry = open_registry()
    manifest_path = manifest_path_of(plugin, registry)
    if manifest_path is None:
        raise CliError(f"no plugin '{plugin}' is registered and no such folder exists")
    _build_first(plugin, registry, force=True)
    from mrpvm.shells.plugin_tools.build import read_manifest

    manifest = read_manifest(manifest_path)
    if manifest is None:
        raise CliError(
            f"{manifest_path} is not a valid manifest (`mrpvm plugin check` says why)", exit_code=1
        )
    if manifest.build is None:
        raise CliError(f"{manifest_path} declares no `build`: nothing to build", exit_code=1)
    print(f"{manifest.id}: {manifest_path.parent / manifest.command}")


@plugin_app.command("run")
def plugin_run(
    plugin: Annotated[str, typer.Argument(help="A registered plugin id, or a folder holding manifest.json.")],
    op: Annotated[
        str | None,
        typer.Option("--op", help="The op to call (default: the request's op or the type's main op)."),
    ] = None,
    input_file: Annotated[
        str | None, typer.Option("--input", "-i", help="Request JSON file, or - for stdin.")
    ] = None,
    one_shot: Annotated[
        bool, typer.Option("--one-shot", help="Start a fresh one-shot process even for a worker plugin.")
    ] = False,
    timeout_ms: Annotated[
        int | None,
        typer.Option(
            "--timeout-ms", min=1, help="Deadline for this call (default: the manifest's timeoutMs)."
        ),
    ] = None,
) -> None:
    """Send one request to a plugin exactly as the kernel does; print its CNL; exit with its exit code."""
    import asyncio

    from mrpvm.shells.cli.common import CliError, read_input
    from mrpvm.shells.plugin_tools.admin import open_registry, resolve_target
    from mrpvm.shells.plugin_tools.run import run_plugin

    config, registry = open_registry()
    _build_first(plugin, registry)
    if plugin not in registry:
        config, registry = open_registry()  # a wrapper just built may load now
    target = resolve_target(plugin, registry, config)
    if op is not None and op not in target.entry.manifest.ops:
        declared = ", ".join(target.entry.manifest.ops)
        raise CliError(f"--op {op}: {target.entry.id} does not declare that op (its ops: {declared})")
    data = read_input(input_file)
    outcome = asyncio.run(
        run_plugin(
            target.registry,
            target.entry.id,
            data,
            op=op,
            one_shot=one_shot,
            timeout_s=timeout_ms / 1000.0 if timeout_ms else None,
            limits=config.engine.limits,
        )
    )
    if outcome.stdout:
        sys.stdout.write(outcome.stdout if outcome.stdout.endswith("\n") else outcome.stdout + "\n")
        sys.stdout.flush()
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
        sys.stderr.flush()
    raise typer.Exit(outcome.exit_code)


@plugin_app.command("check")
def plugin_check(
    plugin: Annotated[str, typer.Argument(help="A registered plugin id, or a folder holding manifest.json.")],
    as_json: Annotated[
        bool, typer.Option("--json", help='Print JSON: {"plugin", "passed", "checks": [...]}.')
    ] = False,
) -> None:
    """Conformance to protocol v1, for a plugin in any language; exits 1 if any check fails."""
    import asyncio

    from mrpvm.shells.plugin_tools.admin import InvalidManifest, open_registry, resolve_target
    from mrpvm.shells.plugin_tools.check import check_plugin, manifest_failure

    config, registry = open_registry()
    _build_first(plugin, registry)
    if plugin not in registry:
        config, registry = open_registry()  # a wrapper just built may load now
    try:
        target = resolve_target(plugin, registry, config)
    except InvalidManifest as err:
        report = manifest_failure(err.path.parent.name, str(err.path), err.message)
    else:
        notes = []
        if target.from_path and not target.allowlisted:
            notes.append(f"checked as the author's own tool; the kernel will not load it: {target.refusal}")
        report = asyncio.run(
            check_plugin(target.entry, limits=config.engine.limits, notes=notes, target=_where(target.entry))
        )
    if as_json:
        from mrpvm.shells.cli.common import print_json

        print_json(report)
    else:
        _print_report(report)
    raise typer.Exit(0 if report.passed else 1)


def _print_report(report) -> None:
    from mrpvm.shells.cli.common import stdout_console
    from rich.markup import escape
    from rich.table import Table

    console = stdout_console()
    table = Table(title=f"plugin check: {report.plugin} ({report.target})", title_justify="left")
    table.add_column("check", overflow="fold")
    table.add_column("result", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for check in report.checks:
        mark = (
            "[bold red]FAIL[/]"
            if not check.passed
            else ("[yellow]warn[/]" if check.warning else "[green]pass[/]")
        )
        table.add_row(escape(check.name), mark, escape(check.detail))
    console.print(table)
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    failed = [c for c in report.checks if not c.passed]
    if failed:
        console.print(
            f"[bold red]{len(failed)} of {len(report.checks)} checks failed[/] for {escape(report.plugin)}:"
        )
        for check in failed:
            console.print(f"  - {escape(check.name)}: {escape(check.detail)}", soft_wrap=True)
    else:
        warned = f" ({report.warnings} with a warning)" if report.warnings else ""
        console.print(f"[green]all {len(report.checks)} checks passed[/]{warned} for {escape(report.plugin)}")
    for check in report.checks:
        if check.passed and check.warning:
            console.print(
                f"  [yellow]warning[/] {escape(check.name)}: {escape(check.detail)}", soft_wrap=True
            )


def _where(entry) -> str:
    """How to point at a plugin: a built-in's manifest file, a wrapper's folder."""
    return str(entry.manifest_path if entry.builtin else entry.folder)


@plugin_app.command("logs")
def plugin_logs(
    plugin: Annotated[str, typer.Argument(help="A plugin id, or a folder holding manifest.json.")],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new lines as they come (Ctrl-C stops).")
    ] = False,
    lines: Annotated[
        int, typer.Option("--lines", "-n", min=0, help="How many of the last lines to print (0: all).")
    ] = 50,
) -> None:
    """What a plugin wrote to stderr (its log under the kernel home, rotated by size)."""
    from mrpvm.kernel.config import load_config
    from mrpvm.shells.plugin_tools.logs import follow as follow_log
    from mrpvm.shells.plugin_tools.logs import last_lines

    config, _ = load_config()
    folder = Path(config.home) / "logs"
    plugin_id = _plugin_id(plugin)
    shown = last_lines(folder, plugin_id, lines)
    if not shown and not follow:
        from mrpvm.shells.cli.common import CliError

        raise CliError(
            f"no log for '{plugin_id}' under {folder} yet: it is written when the plugin writes to stderr",
            exit_code=1,
        )
    for line in shown:
        print(line)
    sys.stdout.flush()
    if follow:
        for line in follow_log(folder, plugin_id):
            print(line, flush=True)


def _plugin_id(spec: str) -> str:
    """A folder's manifest id, or the argument itself."""
    manifest = Path(spec) / "manifest.json"
    if manifest.is_file():
        import msgspec

        try:
            data = msgspec.json.decode(manifest.read_bytes())
        except msgspec.DecodeError:
            data = {}
        if isinstance(data, dict) and isinstance(data.get("id") or data.get("name"), str):
            return data.get("id") or data["name"]
    return spec
