"""`mrpvm store migrate --to URL`: copy this home's SQLite store into an empty PostgreSQL store
(kernel/store_migrate.py); `mrpvm store show`: the store's backend, location and nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mrpvm.shells.cli.common import command_group

store_app = command_group("The kernel store: where it is, and moving it to PostgreSQL.")


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")


@store_app.command("migrate")
def store_migrate(
    to: Annotated[str, typer.Option("--to", help="The target: a postgresql:// URL (an empty database).")],
    source: Annotated[
        Path | None, typer.Option("--from", help="The SQLite file to copy (default: <home>/mrpvm.db).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Copy every KB, source, unit, session, turn, planner record, LLM setting and cache entry of a SQLite
    store into an empty PostgreSQL store, in one transaction; then set MRPVM_STORE_URL on every node."""
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.db import DB_NAME, URL_VARIABLE
    from mrpvm.kernel.store import Store
    from mrpvm.kernel.store_migrate import migrate_store
    from mrpvm.shells.cli.common import CliError, print_json, stdout_console

    config, _ = load_config()
    home = Path(config.home)
    path = source or home / DB_NAME
    if not path.is_file():
        raise CliError(f"no SQLite store at {path}")
    if not to.startswith(("postgresql://", "postgres://")):
        raise CliError("--to must be a postgresql:// URL")
    with Store(path, home=home) as old, Store.open(home, {URL_VARIABLE: to}) as new:
        report = migrate_store(old, new)
    if as_json:
        print_json(report)
        return
    console = stdout_console()
    console.print(f"copied {report.source} -> {report.target}")
    for table, count in report.rows.items():
        console.print(f"  {table}: {count}")
    console.print(f"now set {URL_VARIABLE} on every node (the SQLite file is left as it was)")


@store_app.command("show")
def store_show(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """The store's backend, location (never credentials), schema version, this node and the known nodes."""
    from mrpvm.shells.cli.common import open_store, print_json, stdout_console

    with open_store() as store:
        info = {
            "backend": store.backend,
            "location": store.describe(),
            "schemaVersion": store.schema_version(),
            "node": store.node_id,
            "nodes": store.nodes(),
        }
    if as_json:
        print_json(info)
        return
    console = stdout_console()
    for key, value in info.items():
        console.print(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
