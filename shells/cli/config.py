"""`mrpvm config show`: the effective configuration, where each value came from, the store (backend and
location, never credentials) and this node, and whether plugins run sandboxed on this machine
(`sandbox_status`: mode, active, mechanism, reason, whole-sandbox limits)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from mrpvm.shells.cli.common import command_group

config_app = command_group("Show the effective configuration.")


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """The effective configuration and where each value came from (default, config file, environment), and
    the plugin sandbox's state on this machine."""
    import msgspec
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.supervisor.sandbox import sandbox_status
    from mrpvm.shells.cli.common import print_json, stdout_console

    config, sources = load_config()
    sandbox = sandbox_status(config.engine.sandbox, config.engine.limits)
    llm = _llm_status()
    flat = _flatten(msgspec.to_builtins(config))
    import os

    from mrpvm.kernel.db import URL_VARIABLE, store_location
    from mrpvm.kernel.node import NODE_VARIABLE, node_id_for

    home_source = "env MRPVM_HOME" if os.environ.get("MRPVM_HOME") else "default (~/.mrpvm)"
    rows = [
        {"key": k, "value": v, "source": sources.get(k, home_source if k == "home" else "")}
        for k, v in flat.items()
    ]
    # the store and this node (README "Running on several machines"); the URL is shown without credentials
    backend, location = store_location(config.home, os.environ.get(URL_VARIABLE, ""))
    url_source = f"env {URL_VARIABLE}" if os.environ.get(URL_VARIABLE) else "default (the home's SQLite file)"
    node_source = f"env {NODE_VARIABLE}" if os.environ.get(NODE_VARIABLE) else "default (<home>/node-id)"
    store = {"backend": backend, "location": location, "node": node_id_for(Path(config.home))}
    rows += [
        {"key": "store.backend", "value": backend, "source": url_source},
        {"key": "store.location", "value": location, "source": url_source},
        {"key": "store.node", "value": store["node"], "source": node_source},
    ]
    if as_json:
        print_json(
            {
                "config": msgspec.to_builtins(config),
                "sources": {r["key"]: r["source"] for r in rows},
                "sandbox": msgspec.to_builtins(sandbox),
                "store": store,
                "llm": llm,
            }
        )
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
    console = stdout_console()
    console.print(table)
    state = f"active ({sandbox.mechanism})" if sandbox.active else f"NOT active: {sandbox.reason}"
    console.print(f"plugin sandbox (mode {sandbox.mode}): {state}")
    for item in sandbox.isolation:
        console.print(f"  - {item}")
    limits = sandbox.limits
    if limits is not None:
        caps = [f"{limits.processes} processes" if limits.processes else "no process cap"]
        caps.append(f"{limits.memoryMB} MB together" if limits.memoryMB else "memory per process only")
        why = f" ({limits.reason})" if limits.reason else ""
        console.print(f"whole-sandbox limits: {limits.mechanism}: {', '.join(caps)}{why}")
    console.print(llm.summary(), markup=False, highlight=False, soft_wrap=True)
    if llm.configured:
        for role, model in llm.roles.items():
            console.print(
                f"  - {role}: {model or '(the request model, else the endpoint default)'}", markup=False
            )


def _llm_status():
    """The LLM endpoint (no key), whether it answers, and the model per role (from the stored settings)."""
    import os

    from mrpvm.kernel.llm.settings import RoleTable, settings_store_for
    from mrpvm.shells.cli.common import open_store
    from mrpvm.shells.cli.settings import endpoint_status, role_models

    with open_store() as store:
        table = RoleTable(settings_store_for(store), env_model=os.environ.get("MRPVM_LLM_MODEL", ""))
        roles = role_models(table.effective())
    return endpoint_status(roles)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
