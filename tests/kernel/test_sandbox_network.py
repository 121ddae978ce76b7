"""The sandbox's network: no plugin reaches anything on the host's network, and a plugin that declares
usesLLM reaches the kernel's LLM endpoint and nothing else (kernel/supervisor/llm_relay.py) — not a
token-less daemon on loopback, not the upstream LLM server, not any other local port.

Real bubblewrap sandboxes, a real LLM bridge over tests/support/llm_server.py, a real `mrpvm serve`.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from api_support import Daemon
from llm_server import ScriptedLLM
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.context import llm_route
from mrpvm.kernel.llm import LLMBridge
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.store import Store
from mrpvm.kernel.supervisor.sandbox import Sandbox
from supervisor_support import (
    answer_json,
    build_registry,
    manifest,
    processes_with,
    request,
    run,
    sandboxed_supervisor,
)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    folder = tmp_path_factory.mktemp("plugins")
    build_registry(folder)
    for plugin_id, worker in (("llm-oneshot", False), ("llm-worker", True)):
        spec = manifest(plugin_id, "misbehave.py", worker=worker, usesLLM=True, maxLLMCalls=1)
        (folder / f"{plugin_id}.json").write_text(json.dumps(spec))
    return Registry.load(folder)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    """A token-less daemon on loopback: what a plugin must not be able to call."""
    with Daemon(tmp_path_factory.mktemp("home")) as d:
        yield d


def port_of(url: str) -> int:
    return urlsplit(url).port or 0


async def ask(sup, plugin: str, prompt: str) -> dict:
    return answer_json(await sup.call(plugin, request(prompt)))


@asynccontextmanager
async def routed(
    registry: Registry, folder: Path, upstream: ScriptedLLM
) -> AsyncIterator[tuple[object, int]]:
    """A sandboxed supervisor whose LLM plugins are routed to a real bridge (as KernelContext does):
    (the supervisor, the port of the bridge's loopback endpoint)."""
    env = {"MRPVM_LLM_BASE_URL": upstream.base_url, "MRPVM_LLM_MODEL": "m"}
    store = Store(folder / "mrpvm.db")
    try:
        async with LLMBridge.from_environ(env, store=store) as bridge, sandboxed_supervisor(registry) as sup:
            sup.route_llm(llm_route(bridge))
            yield sup, port_of(bridge.base_url or "")
    finally:
        store.close()


def test_without_a_route_no_plugin_has_any_network(registry: Registry) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    async def go():
        async with sandboxed_supervisor(registry) as sup:
            return [
                await ask(sup, p, f"connect:{port}") for p in ("bad-oneshot", "llm-oneshot", "llm-worker")
            ]

    try:
        results = run(go)
    finally:
        server.close()
    assert [r["connected"] for r in results] == [False, False, False]


def test_llm_plugins_reach_the_llm_endpoint_and_nothing_else(
    registry: Registry, daemon: Daemon, tmp_path: Path
) -> None:
    assert httpx.get(daemon.url + "/sessions").status_code == 200  # the host reaches the daemon, no token
    with ScriptedLLM() as upstream:

        async def go():
            async with routed(registry, tmp_path, upstream) as (sup, endpoint):
                out: dict[str, dict] = {}
                for plugin in ("llm-oneshot", "llm-worker", "bad-oneshot"):
                    out[f"{plugin} endpoint"] = await ask(sup, plugin, f"get:{endpoint}/v1/models")
                    out[f"{plugin} daemon"] = await ask(sup, plugin, f"get:{port_of(daemon.url)}/sessions")
                    out[f"{plugin} upstream"] = await ask(
                        sup, plugin, f"connect:{port_of(upstream.base_url)}"
                    )
                return out

        seen = run(go, limit_s=120)
    for plugin in ("llm-oneshot", "llm-worker"):
        reached = seen[f"{plugin} endpoint"]
        assert reached["connected"] and " 401 " in reached["status"] + " ", reached  # the endpoint
        assert "LLM_TOKEN_INVALID" in reached["body"] or "token" in reached["body"].lower()
        assert seen[f"{plugin} daemon"]["connected"] is False, seen[f"{plugin} daemon"]
        assert seen[f"{plugin} upstream"]["connected"] is False
    for what in ("endpoint", "daemon", "upstream"):  # a plugin that does not use the LLM: nothing at all
        assert seen[f"bad-oneshot {what}"]["connected"] is False


def test_the_relay_outlives_the_stray_sweeps_of_a_warm_worker(registry: Registry, tmp_path: Path) -> None:
    marker = f"600.{uuid.uuid4().int % 10**9:09d}"
    with ScriptedLLM() as upstream:

        async def go():
            async with routed(registry, tmp_path, upstream) as (sup, endpoint):
                statuses, pids = [], set()
                for _ in range(6):
                    pids.add((await ask(sup, "llm-worker", f"escape:{marker}"))["pid"])
                    await anyio.sleep(0.3)  # past the sweep interval: the stray is killed
                    statuses.append((await ask(sup, "llm-worker", f"get:{endpoint}/v1/models"))["status"])
                end = time.monotonic() + 3
                while processes_with(marker) and time.monotonic() < end:
                    await anyio.sleep(0.05)
                return statuses, pids, processes_with(marker), sup.health()["llm-worker"]["spawns"]

        statuses, pids, left, spawns = run(go, limit_s=120)
    assert all(" 401 " in s + " " for s in statuses), statuses  # the relay still forwards after every sweep
    assert left == [] and spawns == 1 and pids == {2}  # strays killed, the same worker, the plugin is pid 2


def test_without_the_sandbox_a_plugin_reaches_the_daemon(registry: Registry, daemon: Daemon) -> None:
    """What the private network fixes (and proof the refusals above can fail)."""

    async def go():
        sandbox = Sandbox(SandboxConfig(mode="off"))
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            return await ask(sup, "llm-oneshot", f"get:{port_of(daemon.url)}/sessions")

    reached = run(go)
    assert reached["connected"] and " 200 " in reached["status"] + " " and "sessions" in reached["body"]


def test_the_relay_needs_nothing_outside_the_sandbox(registry: Registry, tmp_path: Path) -> None:
    """The command line: a private network always, the relay first for an LLM plugin once routed."""
    sandbox = Sandbox(SandboxConfig(mode="require"), tmp_path / "home")
    plain = sandbox.command(["/usr/bin/true"], tmp_path, llm=True)
    assert "--unshare-net" in plain and "/run/mrpvm/llm_relay.py" not in plain
    socket_file = tmp_path / "llm.sock"
    sandbox.route_llm(llm_route_for(socket_file))
    relayed = sandbox.command(["/usr/bin/true"], tmp_path, llm=True)
    assert "--unshare-net" in relayed
    tail = relayed[relayed.index("--chdir") :]
    assert (
        tail[4:9] == ["-I", "-S", "/run/mrpvm/llm_relay.py", "127.0.0.1", "4321"]
        and tail[-1] == "/usr/bin/true"
    )
    assert "--unshare-net" in sandbox.command(["/usr/bin/true"], tmp_path, llm=False)
    assert "/run/mrpvm/llm_relay.py" not in sandbox.command(["/usr/bin/true"], tmp_path, llm=False)
    assert os.path.basename(relayed[relayed.index(str(socket_file)) + 1]) == "llm.sock"


def llm_route_for(socket_file: Path):
    from mrpvm.kernel.supervisor.sandbox import LlmRoute

    return LlmRoute(host="127.0.0.1", port=4321, socket=str(socket_file))
