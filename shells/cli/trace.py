"""`mrpvm trace REQUEST_ID`: a stored turn's execution trace as a tree, JSON or Mermaid."""

from __future__ import annotations

import sys
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("trace")(trace)


def trace(
    request_id: Annotated[str, typer.Argument(help="The request id of a stored turn.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="tree | json | mermaid")] = "tree",
) -> None:
    """Show a turn's execution trace (the DAG of frames, seeds, plugin calls and backtracking)."""
    from mrpvm.shells.cli.common import CliError, open_store, stdout_console
    from mrpvm.shells.trace_view import render_json, render_mermaid, render_tree

    if fmt not in ("tree", "json", "mermaid"):
        raise CliError(f"unknown format '{fmt}' (tree, json or mermaid)")
    with open_store() as store:
        turn = store.get_turn(request_id)
    if not turn.trace:
        raise CliError(f"turn {request_id} has no stored trace", exit_code=1)
    if fmt == "json":
        sys.stdout.write(render_json(turn.trace) + "\n")
    elif fmt == "mermaid":
        sys.stdout.write(render_mermaid(turn.trace))
    else:
        stdout_console().print(render_tree(turn.trace))
