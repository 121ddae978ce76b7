"""LLM role settings (DS028): resolution order, persistence in the kernel's database, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mrpvm.kernel.errors import BadInput
from mrpvm.kernel.llm.settings import (
    ROLES,
    RoleSettings,
    RoleTable,
    parse_assignment,
    role_for_call,
    settings_store_for,
)
from mrpvm.kernel.store import Store

SHIPPED = RoleSettings(defaultModel="", roles={r: "" for r in ROLES}, plugins={})


def table(tmp_path: Path, env_model: str = "", defaults: RoleSettings = SHIPPED) -> RoleTable:
    return RoleTable(Store(tmp_path / "mrpvm.db"), env_model=env_model, defaults=defaults)


def test_resolution_order_plugin_then_role_then_request_then_default(tmp_path: Path) -> None:
    roles = table(tmp_path)
    assert roles.resolve("goal-fast", "gs-llm-fast", "").source == "none"
    roles.update({"default": "small"})
    assert (
        roles.resolve("goal-fast", "gs-llm-fast", "").model,
        roles.resolve("goal-fast", "gs-llm-fast").source,
    ) == (
        "small",
        "default",
    )
    assert roles.resolve("goal-fast", "gs-llm-fast", "session-model").model == "session-model"
    roles.update({"goal-fast": "fast-model"})
    assert roles.resolve("goal-fast", "gs-llm-fast", "session-model").model == "fast-model"
    assert roles.resolve("goal-deep", "gs-llm-deep", "session-model").model == "session-model"
    roles.update({"plugin:gs-llm-fast": "pinned"})
    assert roles.resolve("goal-fast", "gs-llm-fast", "session-model").model == "pinned"
    assert roles.resolve("goal-fast", "other-gs", "").model == "fast-model"
    # Clearing a level falls through to the next one.
    roles.update({"plugin:gs-llm-fast": "", "goal-fast": ""})
    assert roles.resolve("goal-fast", "gs-llm-fast", "").model == "small"


def test_env_model_overrides_the_stored_default_but_not_roles(tmp_path: Path) -> None:
    table(tmp_path).update({"default": "stored-default", "validation": "judge"})
    roles = table(tmp_path, env_model="env-model")
    assert roles.resolve("seed-fast", None).model == "env-model"
    assert roles.resolve("validation", None).model == "judge"


def test_shipped_defaults_apply_until_overridden(tmp_path: Path) -> None:
    shipped = RoleSettings(defaultModel="base", roles={"planner": "shipped-planner"})
    roles = table(tmp_path, defaults=shipped)
    assert roles.resolve("planner", None).model == "shipped-planner"
    roles.update({"planner": "mine"})
    assert table(tmp_path, defaults=shipped).resolve("planner", None).model == "mine"


def test_settings_persist_in_the_store_and_every_node_sees_them(tmp_path: Path, store_env) -> None:
    store = Store.open(tmp_path / "a", store_env)
    try:
        RoleTable(settings_store_for(store)).update({"kb-ingest": "ingest-model"})
    finally:
        store.close()
    # another node's store: the same database (PostgreSQL) or the same file (SQLite, one machine)
    other_home = tmp_path / ("b" if store_env else "a")
    reopened = Store.open(other_home, {**store_env, "MRPVM_NODE_ID": "other"})
    try:
        assert reopened.integrity_check() == []
        assert RoleTable(settings_store_for(reopened)).resolve("kb-ingest", None).model == "ingest-model"
    finally:
        reopened.close()


@pytest.mark.parametrize("bad", ["nonsense=m", "plugin:=m", "=m", "goal-fast"])
def test_bad_assignments_are_refused(tmp_path: Path, bad: str) -> None:
    roles = table(tmp_path)
    with pytest.raises(BadInput):
        roles.update(dict([parse_assignment(bad)]))
    assert roles.stored() == RoleSettings()


def test_role_for_call_picks_ingest_for_normalization() -> None:
    assert role_for_call(["seed-fast", "kb-ingest"], "sd-plugin", "normalizePersistentContext") == "kb-ingest"
    assert role_for_call(["seed-fast", "kb-ingest"], "sd-plugin", "detectSeeds") == "seed-fast"
    assert role_for_call(["seed-deep"], "sd-plugin", "normalizePersistentContext") == "seed-deep"
    assert role_for_call([], "gs-plugin", "solve") is None


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env["MRPVM_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "mrpvm.shells.cli.main", "settings", "llm-roles", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_cli_sets_and_shows_roles(tmp_path: Path) -> None:
    done = _cli(tmp_path, "--set", "goal-deep=big", "--set", "plugin:val-llm=judge", "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["roles"]["goal-deep"] == "big" and shown["plugins"] == {"val-llm": "judge"}
    assert set(shown["roles"]) == set(ROLES)
    again = json.loads(_cli(tmp_path, "--json").stdout)  # a new process reads the stored settings
    assert again == shown
    assert "big" in _cli(tmp_path).stdout
    refused = _cli(tmp_path, "--set", "chef=gpt")
    assert refused.returncode == 2 and "UNKNOWN_ROLE" in refused.stderr
