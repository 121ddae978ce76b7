"""Shared helpers for the supervisor tests: a registry of scripted plugins in a temp folder, and process checks."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mrpvm.kernel.config import LimitsConfig, SandboxConfig
from mrpvm.kernel.registry import Registry, load_manifest
from mrpvm.kernel.supervisor import PluginCallError, Supervisor
from mrpvm.kernel.supervisor.sandbox import Sandbox
from mrpvm.protocol.envelope import ContextItem, Request

PLUGINS = Path(__file__).resolve().parent / "plugins"
HINTS = {
    "expectedLatencyMs": 1,
    "expectedLLMCalls": 0,
    "relativeCost": 0.1,
    "supportedActs": [],
    "topicTags": [],
    "preferredDepth": "shallow",
    "fallbackRole": "test",
    "evidenceStyle": [],
    "confidenceWhenMatched": 0.5,
}
UNSANDBOXED = Sandbox(SandboxConfig(mode="off"))
MAX_OUTPUT = 65536
MAX_INPUT = 16384
T = TypeVar("T")


def manifest(plugin_id: str, script: str, *, worker: bool, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": plugin_id,
        "type": "gs-plugin",
        "command": "python",
        "args": [script],
        "worker": worker,
        "concurrency": 2,
        "timeoutMs": 5000,
        "maxInputSizeBytes": MAX_INPUT,
        "maxOutputBytes": MAX_OUTPUT,
        "plannerHints": HINTS,
    }
    data.update(extra)
    return data


def build_registry(folder: Path) -> Registry:
    """bad-worker / bad-oneshot (misbehave.py), echo-(big-)worker / echo-(big-)oneshot (SDK echo), spawn-fail."""
    folder.mkdir(parents=True, exist_ok=True)
    for script in ("misbehave.py", "echo_gs.py"):
        shutil.copy(PLUGINS / script, folder / script)
    manifests = [
        manifest("bad-worker", "misbehave.py", worker=True),
        manifest("bad-oneshot", "misbehave.py", worker=False),
        manifest("echo-worker", "echo_gs.py", worker=True),
        manifest("echo-oneshot", "echo_gs.py", worker=False),
        manifest(
            "echo-big-worker", "echo_gs.py", worker=True, maxInputSizeBytes=1 << 20, maxOutputBytes=4 << 20
        ),
        manifest(
            "echo-big-oneshot", "echo_gs.py", worker=False, maxInputSizeBytes=1 << 20, maxOutputBytes=4 << 20
        ),
    ]
    for data in manifests:
        (folder / f"{data['id']}.json").write_text(json.dumps(data))
    registry = Registry.load(folder)
    assert not registry.rejected, registry.rejected
    gone = folder / "gone"
    gone.mkdir()
    shutil.copy(PLUGINS / "misbehave.py", gone / "misbehave.py")
    (gone / "manifest.json").write_text(json.dumps(manifest("spawn-fail", "misbehave.py", worker=True)))
    registry.add(load_manifest(gone / "manifest.json", builtin=False))
    shutil.rmtree(gone)  # its cwd no longer exists: every start fails
    return registry


def limits(**overrides: int) -> LimitsConfig:
    values = {
        "pluginTimeoutMs": 5000,
        "pluginMemoryMB": 1024,
        "maxOutputBytes": 16 << 20,
        "crashLoopThreshold": 3,
        "crashBackoffMs": 200,
        "crashBackoffMaxMs": 800,
    }
    values.update(overrides)
    return LimitsConfig(**values)


def request(prompt: str, items: int = 2) -> Request:
    context = [
        ContextItem(title=f"t{i}", sourceLink="src", text=f"Role: Description\nTopic: t\nClaim: c{i}")
        for i in range(items)
    ]
    return Request(prompt=prompt, context=context, op="solve")


def run(fn: Callable[[], Awaitable[T]], limit_s: float = 120.0) -> T:
    """Run `fn` on a fresh event loop; `limit_s` only guards against a hang (a busy 2-core machine with
    CPU hogs starts Python plugins slowly), it is never what a test measures."""

    async def go() -> T:
        with anyio.fail_after(limit_s):
            return await fn()

    return anyio.run(go)


async def error_of(awaitable: Awaitable[Any]) -> PluginCallError:
    """The PluginCallError an awaitable raises (fails the test if it returns)."""
    try:
        value = await awaitable
    except PluginCallError as err:
        return err
    raise AssertionError(f"expected PluginCallError, got {value!r}")


def answer_json(result: Any) -> dict[str, Any]:
    return json.loads(result.document.answer)


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (absent, or a zombie waiting for a reaper that is not us)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def processes_with(text: str) -> list[int]:
    """Live host processes whose command line contains `text` (e.g. the unique sleep duration an escaped
    child was given, or a kernel home a sandboxed plugin's bwrap command names)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and not process_gone(int(entry)):
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(int(entry))
    return found


async def wait_gone(pid: int, limit_s: float = 5.0) -> bool:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if process_gone(pid):
            return True
        await anyio.sleep(0.01)
    return process_gone(pid)


async def wait_file(path: Path, limit_s: float = 10.0) -> str:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await anyio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


def new_supervisor(registry: Registry, **kwargs: Any) -> Supervisor:
    """A supervisor without the sandbox: these tests watch plugin processes by their host pids and
    marker files, which a sandboxed plugin cannot see; tests/kernel/test_sandbox.py covers the sandbox."""
    kwargs.setdefault("limits", limits())
    kwargs.setdefault("sandbox", UNSANDBOXED)
    return Supervisor(registry, **kwargs)


def sandboxed_supervisor(registry: Registry, **kwargs: Any) -> Supervisor:
    kwargs.setdefault("limits", limits())
    kwargs.setdefault("sandbox", Sandbox(SandboxConfig(mode="require")))
    return Supervisor(registry, **kwargs)
