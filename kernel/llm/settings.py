"""LLM role settings (DS028): which model serves each role, per-plugin overrides, and their persistence.

Resolution order for a call: plugin override → role → request/session model → default model. An empty
string means "not set here, ask the next level". Shipped defaults live in `config/llm-roles.json`; what
`mrpvm settings llm-roles --set` changes is stored in the kernel's store (its `llm_settings` table, so every
node sharing a store resolves roles alike) through a `SettingsStore`: the Store's `get_setting/set_setting`.
`MRPVM_LLM_MODEL` overrides the default model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import msgspec

from ..config import DEFAULTS_DIR
from ..errors import BadInput

ROLES: tuple[str, ...] = (
    "seed-fast",
    "seed-deep",
    "goal-fast",
    "goal-deep",
    "kb-ingest",
    "kb-derive",
    "planner",
    "validation",
)
SETTINGS_KEY = "llm.roles"
DEFAULTS_FILE = DEFAULTS_DIR / "llm-roles.json"
PLUGIN_PREFIX = "plugin:"


class RoleSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Model names by role and by plugin id; empty means unset."""

    defaultModel: str = ""
    roles: dict[str, str] = {}
    plugins: dict[str, str] = {}


class Resolution(msgspec.Struct, kw_only=True, frozen=True):
    """The model a call uses and the level it came from (plugin, role, request, default, upstream, none)."""

    model: str
    source: str


@runtime_checkable
class SettingsStore(Protocol):
    """Where settings persist: string values by key."""

    def get_setting(self, key: str) -> str | None: ...

    def set_setting(self, key: str, value: str) -> None: ...


def settings_store_for(store: Any) -> SettingsStore:
    """The store persists settings itself (its `llm_settings` table, on either backend)."""
    if isinstance(store, SettingsStore):
        return store
    raise TypeError(f"cannot persist LLM settings in {type(store).__name__}")


def shipped_defaults(path: Path = DEFAULTS_FILE) -> RoleSettings:
    if not path.is_file():
        return RoleSettings()
    try:
        return msgspec.json.decode(path.read_bytes(), type=RoleSettings)
    except msgspec.MsgspecError as err:
        raise BadInput("CONFIG_INVALID", f"{path}: {err}") from None


def _merge(base: RoleSettings, top: RoleSettings) -> RoleSettings:
    return RoleSettings(
        defaultModel=top.defaultModel or base.defaultModel,
        roles={**base.roles, **{k: v for k, v in top.roles.items() if v}},
        plugins={**base.plugins, **{k: v for k, v in top.plugins.items() if v}},
    )


class RoleTable:
    """Effective role settings: shipped defaults, then stored overrides, then MRPVM_LLM_MODEL."""

    def __init__(
        self, store: SettingsStore | None = None, *, env_model: str = "", defaults: RoleSettings | None = None
    ):
        self.store = store
        self.env_model = env_model.strip()
        self.defaults = defaults if defaults is not None else shipped_defaults()

    def stored(self) -> RoleSettings:
        if self.store is None:
            return RoleSettings()
        raw = self.store.get_setting(SETTINGS_KEY)
        if not raw:
            return RoleSettings()
        try:
            return msgspec.json.decode(raw, type=RoleSettings)
        except msgspec.MsgspecError:
            return RoleSettings()  # an unreadable row must not take the bridge down; `--set` rewrites it

    def effective(self) -> RoleSettings:
        merged = _merge(self.defaults, self.stored())
        if self.env_model:
            merged.defaultModel = self.env_model
        return merged

    def resolve(
        self, role: str | None, plugin_id: str | None = None, request_model: str | None = None
    ) -> Resolution:
        """plugin override → role → request/session model → default model; model "" when none is set."""
        eff = self.effective()
        if plugin_id and eff.plugins.get(plugin_id):
            return Resolution(model=eff.plugins[plugin_id], source="plugin")
        if role and eff.roles.get(role):
            return Resolution(model=eff.roles[role], source="role")
        if request_model:
            return Resolution(model=request_model, source="request")
        if eff.defaultModel:
            return Resolution(model=eff.defaultModel, source="default")
        return Resolution(model="", source="none")

    def update(self, assignments: dict[str, str]) -> RoleSettings:
        """Store `ROLE=MODEL`, `plugin:<id>=MODEL` or `default=MODEL` (empty MODEL clears it); one write."""
        if self.store is None:
            raise BadInput("SETTINGS_READ_ONLY", "no settings store to write to")
        current = self.stored()
        roles, plugins, default = dict(current.roles), dict(current.plugins), current.defaultModel
        for key, model in assignments.items():
            key, model = key.strip(), model.strip()
            if key == "default":
                default = model
            elif key.startswith(PLUGIN_PREFIX):
                plugin_id = key[len(PLUGIN_PREFIX) :].strip()
                if not plugin_id:
                    raise BadInput("BAD_SETTING", f"'{key}': give a plugin id after '{PLUGIN_PREFIX}'")
                _set_or_clear(plugins, plugin_id, model)
            elif key in ROLES:
                _set_or_clear(roles, key, model)
            else:
                raise BadInput(
                    "UNKNOWN_ROLE",
                    f"unknown LLM role '{key}' (roles: {', '.join(ROLES)}; or default, or {PLUGIN_PREFIX}<plugin-id>)",
                    {"role": key},
                )
        updated = RoleSettings(defaultModel=default, roles=roles, plugins=plugins)
        self.store.set_setting(SETTINGS_KEY, msgspec.json.encode(updated).decode())
        return updated


def _set_or_clear(table: dict[str, str], key: str, model: str) -> None:
    if model:
        table[key] = model
    else:
        table.pop(key, None)


def parse_assignment(text: str) -> tuple[str, str]:
    """`ROLE=MODEL` → (role, model). `ROLE=` clears."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise BadInput("BAD_SETTING", f"expected ROLE=MODEL, got '{text}'")
    return key.strip(), value.strip()


def role_for_call(model_roles: list[str], plugin_type: str, op: str) -> str | None:
    """The role a plugin call draws on, from the manifest's `modelRoles` and the op.

    Source normalization uses `kb-ingest` when the plugin declares it; otherwise the first declared role
    that is not an ingest/derive role serves the plugin's main op.
    """
    if not model_roles:
        return None
    if op == "normalizePersistentContext" and "kb-ingest" in model_roles:
        return "kb-ingest"
    if op == "onSourceText" and "kb-derive" in model_roles:
        return "kb-derive"
    for role in model_roles:
        if role not in ("kb-ingest", "kb-derive"):
            return role
    return model_roles[0]
