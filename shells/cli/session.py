"""`mrpvm session list|show`: chat sessions (opens only the SQLite store)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from mrpvm.kernel.budgets import MAX_DELIBERATION, check_deliberation
from mrpvm.shells.cli.common import command_group, open_store

if TYPE_CHECKING:
    from mrpvm.kernel.records import SessionRecord
    from mrpvm.kernel.store import Store

session_app = command_group("Chat sessions: list, show, save into a KB, set preferences.")


def register(app: typer.Typer) -> None:
    app.add_typer(session_app, name="session")


def _session_row(store: Store, record: SessionRecord) -> dict[str, Any]:
    import msgspec

    kb_name = None
    if record.kbId:
        kb = store.find_kb(record.kbId)
        kb_name = kb.name if kb else None
    return {
        "id": record.id,
        "title": record.title,
        "kbId": record.kbId,
        "kbName": kb_name,
        "turns": record.turnCount,
        "preferences": msgspec.to_builtins(record.preferences),
        "deliberationLevel": record.deliberationLevel,
        "createdAt": record.createdAt,
        "updatedAt": record.updatedAt,
    }


@session_app.command("list")
def session_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List chat sessions."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with open_store() as store:
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
    rows.sort(key=lambda r: r["updatedAt"], reverse=True)
    table = Table(title=f"Sessions ({len(rows)}), last used first", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("id", no_wrap=True)
    table.add_column("title", overflow="ellipsis", max_width=48, no_wrap=True)
    table.add_column("KB", overflow="ellipsis", max_width=20, no_wrap=True)
    table.add_column("turns", justify="right")
    table.add_column("last used", no_wrap=True)
    for row in rows:
        title = row["title"] or "(untitled)"
        table.add_row(row["id"], title, row["kbName"] or "-", str(row["turns"]), _when(row["updatedAt"]))
    console.print(table)
    console.print('continue one: mrpvm ask --session ID "..."; the last one: mrpvm ask -c "..."', style="dim")


def _when(stamp: str) -> str:
    """An ISO timestamp as local 'YYYY-MM-DD HH:MM' (as stored when it does not parse)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


@session_app.command("show")
def session_show(
    session_id: Annotated[str, typer.Argument(help="Session id.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: the session, its turns and unit count.")
    ] = False,
) -> None:
    """Show a session: its KB, preferences, committed units and turns."""
    from mrpvm.shells.cli.common import print_json, stdout_console

    with open_store() as store:
        record = store.get_session(session_id)
        row = _session_row(store, record)
        units = store.session_units(session_id)
        turns = store.list_turns(session_id)
    turn_rows: list[dict[str, Any]] = [
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
    console.print(f"session {record.id}  {record.title or '(untitled)'}")
    console.print(f"KB {kb}  created {_when(record.createdAt)}  last used {_when(record.updatedAt)}")
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


@session_app.command("save")
def session_save(
    session_id: Annotated[str, typer.Argument(help="Session id.")],
    kb: Annotated[str, typer.Option("--kb", help="The KB to save into (name or id; created if absent).")],
    source_name: Annotated[
        str | None, typer.Option("--source-name", help="The source's name (default: session-<id>).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Save a session's committed units as one source of a KB (re-saving replaces it); kb-plugins index it."""
    from mrpvm.knowledge import ops as kb_ops
    from mrpvm.shells.cli.common import report, with_kernel

    async def work(ctx):
        return await kb_ops.save_session(ctx, session_id, kb, source_name)

    record, source, warnings = with_kernel(work)
    report(
        {"kb": record, "source": source, "warnings": warnings},
        f"saved {source.unitCount} unit(s) of session {session_id} as source '{source.name}' of KB '{record.name}'",
        warnings,
        as_json,
    )


@session_app.command("set")
def session_set(
    session_id: Annotated[str, typer.Argument(help="Session id.")],
    deliberation_level: Annotated[
        int | None,
        typer.Option(
            "--deliberation-level",
            min=0,
            max=MAX_DELIBERATION,
            help="Candidates compared per question in this session (0-3).",
        ),
    ] = None,
    title: Annotated[
        str | None,
        typer.Option(
            "--title", help='Rename the session ("" makes it untitled: its next question names it).'
        ),
    ] = None,
) -> None:
    """Change a session's title or preferences (its deliberation level)."""
    from mrpvm.shells.cli.common import CliError, stdout_console

    if deliberation_level is None and title is None:
        raise CliError("nothing to set: give --title or --deliberation-level")
    clean = (
        None if title is None else " ".join(title.split())
    )  # the store checks its length (kernel/names.py)
    with open_store() as store:
        record = store.get_session(session_id)
        if clean is not None:
            record = store.set_session_title(session_id, clean)
        if deliberation_level is not None:
            check_deliberation(deliberation_level)
            record = store.set_session_deliberation(session_id, deliberation_level)
    stdout_console().print(
        f"session {record.id}: title {record.title or '(untitled)'!r}, deliberation level {record.deliberationLevel}",
        markup=False,
    )
