"""`mrpvm settings llm-roles [--set ROLE=MODEL ...]` and `mrpvm settings llm-models`: LLM role settings (DS028)."""

from __future__ import annotations

from typing import Annotated

import typer
from mrpvm.shells.cli.common import command_group

settings_app = command_group("Kernel settings: LLM models per role.")


def register(app: typer.Typer) -> None:
    app.add_typer(settings_app, name="settings")


def _open():
    import os

    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.llm.settings import RoleTable, settings_store_for
    from mrpvm.kernel.store import Store

    config, _ = load_config()
    store = Store.open(config.home)
    return store, RoleTable(settings_store_for(store), env_model=os.environ.get("MRPVM_LLM_MODEL", ""))


@settings_app.command("llm-roles")
def llm_roles(
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="ROLE=MODEL (repeatable). ROLE is a DS028 role, 'default', or 'plugin:<id>'; an empty MODEL clears it.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the effective settings as JSON.")] = False,
) -> None:
    """Show (and change) which model serves each LLM role: plugin override → role → request model → default."""
    from mrpvm.kernel.llm.settings import ROLES, parse_assignment

    store, table = _open()
    try:
        if assignments:
            table.update(dict(parse_assignment(a) for a in assignments))
        effective, stored = table.effective(), table.stored()
    finally:
        store.close()
    endpoint = endpoint_status(role_models(effective))
    if as_json:
        from mrpvm.shells.cli.common import print_json

        print_json(
            {
                "defaultModel": effective.defaultModel,
                "roles": {role: effective.roles.get(role, "") for role in ROLES},
                "plugins": effective.plugins,
                "endpoint": endpoint,
            }
        )
        return
    from mrpvm.shells.cli.common import stdout_console
    from rich import box
    from rich.table import Table

    def origin(value: str, stored_value: str, env: bool = False) -> str:
        if env:
            return "env MRPVM_LLM_MODEL"
        if not value:
            return "unset"
        return "stored" if stored_value == value else "default (config/llm-roles.json)"

    default_label = effective.defaultModel or "(upstream's first model)"
    out = Table(title="LLM roles", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("role", "model", "from"):
        out.add_column(column)
    for role in ROLES:
        model = effective.roles.get(role, "")
        out.add_row(
            role, model or f"→ request model, else {default_label}", origin(model, stored.roles.get(role, ""))
        )
    for plugin_id, model in sorted(effective.plugins.items()):
        out.add_row(f"plugin:{plugin_id}", model, origin(model, stored.plugins.get(plugin_id, "")))
    out.add_row(
        "default",
        default_label,
        origin(effective.defaultModel, stored.defaultModel, env=bool(table.env_model)),
    )
    console = stdout_console()
    console.print(endpoint.summary(), markup=False, highlight=False, soft_wrap=True)
    console.print(out)


def role_models(effective) -> dict[str, str]:
    """Each role's model as it resolves without a request model: its own, else the default ("" if none)."""
    from mrpvm.kernel.llm.settings import ROLES

    return {role: effective.roles.get(role, "") or effective.defaultModel for role in ROLES}


def endpoint_status(roles: dict[str, str]):
    """The LLM endpoint's LLMStatus (probed: does it answer?) with `roles`."""
    import anyio
    from mrpvm.kernel.llm.status import llm_status

    async def probe():
        return await llm_status(roles=roles)

    return anyio.run(probe)


@settings_app.command("llm-models")
def llm_models(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List the models the configured upstream (MRPVM_LLM_BASE_URL) offers, from its /models."""
    import asyncio

    from mrpvm.kernel.llm.bridge import LLMBridge
    from mrpvm.kernel.llm.options import options_from_environ

    bridge = LLMBridge(options_from_environ())
    names = asyncio.run(bridge.available_models())
    if as_json:
        from mrpvm.shells.cli.common import print_json

        print_json({"models": names})
        return
    for name in names:
        print(name)
