"""Effective configuration: shipped defaults (config/), then `$MRPVM_HOME/config.json`, then `MRPVM_*` variables.

Every value is validated on load; an error names the key and where the bad value came from.
`EffectiveConfig.sources` maps each dotted key to its origin, for `mrpvm config show`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from .errors import ConfigError  # the one configuration error (CONFIG_INVALID): loader, CLI and daemon
from .home import home_dir as home_dir  # one definition, shared with the CLI's thin path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULTS_DIR = PROJECT_ROOT / "config"
MANIFESTS_DIR = PROJECT_ROOT / "manifests"

Positive = Annotated[int, msgspec.Meta(gt=0)]
NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class BudgetConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    maxLLMCalls: NonNegative
    requestTimeoutMs: Positive
    maxFrameDepth: NonNegative
    maxParallelSeeds: Positive
    maxPluginsPerStage: Positive
    maxFallbackCalls: NonNegative = 6  # plugin calls a turn may spend backtracking after a weak answer


DEFAULT_MAX_SOURCE_BYTES = 4 * 1024 * 1024


class LimitsConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    pluginTimeoutMs: Positive
    pluginMemoryMB: Positive  # each plugin process (RLIMIT_AS); with cgroups also a plugin and its children
    pluginProcesses: Positive = 256  # processes and threads of a plugin and its children (cgroups.py)
    maxOutputBytes: Positive
    crashLoopThreshold: Positive
    crashBackoffMs: Positive
    crashBackoffMaxMs: Positive
    maxStoredAnswerBytes: Positive = 262144  # a turn's answer texts are stored cut to this (stored_answer.py)
    # the largest source an ingest accepts; kb-plugins need ingest_request_bytes(this) of input (SPEC §7)
    maxSourceBytes: Positive = DEFAULT_MAX_SOURCE_BYTES


class SandboxConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The plugin sandbox (kernel/supervisor/sandbox.py): `auto` sandboxes when the machine can (and says so
    once when it cannot), `require` refuses to run plugins without it, `off` turns it off (said once too).
    `readPaths` / `writePaths`: host folders every plugin may also read / write (never the kernel home)."""

    mode: Literal["auto", "require", "off"] = "auto"
    readPaths: list[str] = []
    writePaths: list[str] = []


class EngineConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    budget: BudgetConfig
    limits: LimitsConfig
    pluginAllowlist: list[str]
    wrapperFolders: list[str]
    sandbox: SandboxConfig = msgspec.field(default_factory=SandboxConfig)


class StageOrders(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    sd: list[str]
    kb: list[str]
    gs: list[str]
    val: list[str]


class PluginsConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    enabled: list[str]
    stageOrders: StageOrders
    plannerOrder: list[str]


class Config(msgspec.Struct, kw_only=True):
    engine: EngineConfig
    plugins: PluginsConfig
    home: str


# Environment variables and the dotted key each one sets (lists are comma-separated).
ENV_KEYS: dict[str, str] = {
    "MRPVM_MAX_LLM_CALLS": "engine.budget.maxLLMCalls",
    "MRPVM_REQUEST_TIMEOUT_MS": "engine.budget.requestTimeoutMs",
    "MRPVM_MAX_FRAME_DEPTH": "engine.budget.maxFrameDepth",
    "MRPVM_MAX_PARALLEL_SEEDS": "engine.budget.maxParallelSeeds",
    "MRPVM_MAX_PLUGINS_PER_STAGE": "engine.budget.maxPluginsPerStage",
    "MRPVM_MAX_FALLBACK_CALLS": "engine.budget.maxFallbackCalls",
    "MRPVM_PLUGIN_TIMEOUT_MS": "engine.limits.pluginTimeoutMs",
    "MRPVM_PLUGIN_MEMORY_MB": "engine.limits.pluginMemoryMB",
    "MRPVM_PLUGIN_PROCESSES": "engine.limits.pluginProcesses",
    "MRPVM_MAX_OUTPUT_BYTES": "engine.limits.maxOutputBytes",
    "MRPVM_MAX_STORED_ANSWER_BYTES": "engine.limits.maxStoredAnswerBytes",
    "MRPVM_MAX_SOURCE_BYTES": "engine.limits.maxSourceBytes",
    "MRPVM_PLUGIN_ALLOWLIST": "engine.pluginAllowlist",
    "MRPVM_WRAPPER_FOLDERS": "engine.wrapperFolders",
    "MRPVM_ENABLED_PLUGINS": "plugins.enabled",
    "MRPVM_SANDBOX": "engine.sandbox.mode",
    "MRPVM_SANDBOX_READ_PATHS": "engine.sandbox.readPaths",
    "MRPVM_SANDBOX_WRITE_PATHS": "engine.sandbox.writePaths",
}
PATH_LISTS = ("MRPVM_WRAPPER_FOLDERS", "MRPVM_SANDBOX_READ_PATHS", "MRPVM_SANDBOX_WRITE_PATHS")


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{dotted}: parent '{part}' is not an object")
    node[last] = value


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = msgspec.json.decode(path.read_bytes())
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err.strerror})") from None
    except msgspec.DecodeError as err:
        raise ConfigError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be an object")
    return data


def _env_value(name: str, dotted: str, raw: str, current: Any) -> Any:
    if isinstance(current, list):
        sep = os.pathsep if name in PATH_LISTS else ","
        return [part.strip() for part in raw.split(sep) if part.strip()]
    if isinstance(current, str):
        return raw.strip()
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{dotted}: {name}={raw!r} is not an integer") from None


def load_config(environ: dict[str, str] | None = None) -> tuple[Config, dict[str, str]]:
    """The effective configuration and, for each dotted key, where its value came from."""
    env = dict(os.environ if environ is None else environ)
    home = home_dir(env)
    merged: dict[str, Any] = {
        "engine": _read_json(DEFAULTS_DIR / "engine.json"),
        "plugins": _read_json(DEFAULTS_DIR / "plugins.json"),
    }
    sources = {key: f"default ({DEFAULTS_DIR.name}/{key.split('.')[0]}.json)" for key in _flatten(merged)}
    known = set(sources)
    override = home / "config.json"
    if override.is_file():
        for key, value in _flatten(_read_json(override)).items():
            if key not in known:
                raise ConfigError(f"{key}: unknown key in {override}")
            _set(merged, key, value)
            sources[key] = str(override)
    flat = _flatten(merged)
    for name, dotted in ENV_KEYS.items():
        if name in env:
            _set(merged, dotted, _env_value(name, dotted, env[name], flat.get(dotted)))
            sources[dotted] = f"env {name}"
    try:
        engine = msgspec.convert(merged["engine"], EngineConfig)
        plugins = msgspec.convert(merged["plugins"], PluginsConfig)
    except msgspec.ValidationError as err:
        text = str(err)
        where = ""
        if " - at `$." in text:
            path = text.rsplit(" - at `$.", 1)[1].rstrip("`")
            key = next((k for k in sources if k.endswith(path.split("[")[0])), path)
            where = f" (from {sources.get(key, 'unknown')})"
        raise ConfigError(f"invalid configuration: {text}{where}") from None
    return Config(engine=engine, plugins=plugins, home=str(home)), sources


def wrapper_dirs(config: Config) -> list[Path]:
    """Wrapper folders, relative ones resolved against the project root."""
    return [Path(p) if os.path.isabs(p) else PROJECT_ROOT / p for p in config.engine.wrapperFolders]
