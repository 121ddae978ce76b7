"""One LLM plugin call as the kernel makes it: the real plugin process under the supervisor, its LLM
access through the bridge's loopback relay, the upstream a scripted OpenAI-compatible server
(llm_server.py). `run` makes the call; `scripted` also starts the server with the replies to give and
returns what it recorded; `numbered_unit` makes evidence units by number."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from llm_server import ScriptedLLM, reply
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.context import llm_route
from mrpvm.kernel.llm import CallBudget, LLMBridge, role_for_call
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.store import Store
from mrpvm.kernel.supervisor import PluginCallError, Supervisor
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Budget, Request, unit_to_context_item


def run(
    llm: ScriptedLLM | None,
    tmp_path: Path,
    plugin_id: str,
    op: str,
    prompt: str,
    payload: Any,
    *,
    units: list[KnowledgeUnit] = (),
    calls: int | None = None,
    budget: int = 8,
    with_llm: bool = True,
    env_extra: dict[str, str] | None = None,
    plugin_env: dict[str, str] | None = None,
    request_budget: CallBudget | None = None,
):
    """One plugin call through the supervisor; (document or PluginCallError, bridge events).

    `request_budget` (else a fresh CallBudget(budget)) is the request's LLM budget, to inspect after."""
    env = {
        "MRPVM_LLM_TIMEOUT_MS": "60000",
        "MRPVM_LLM_MAX_ATTEMPTS": "2",
        "MRPVM_LLM_BACKOFF_MS": "10",
        "MRPVM_LLM_MODEL": "test-model",
    }
    if llm is not None:
        env["MRPVM_LLM_BASE_URL"] = llm.base_url
    env.update(env_extra or {})

    async def main():
        store = Store(tmp_path / "mrpvm.db")
        registry = Registry.load(MANIFESTS_DIR, [], [])
        entry = registry.get(plugin_id)
        allowed = entry.manifest.maxLLMCalls if calls is None else calls
        try:
            async with (
                LLMBridge.from_environ(env, store=store) as bridge,
                Supervisor(registry, extra_env=plugin_env) as supervisor,
            ):
                supervisor.route_llm(llm_route(bridge))  # as KernelContext does: the sandbox's relay
                bridge.open_request("req-1", request_budget or CallBudget(budget))
                access = None
                if with_llm:
                    role = role_for_call(entry.manifest.modelRoles, entry.type, op)
                    access = bridge.access(
                        "req-1", "frame-0", plugin_id, role, allowed, time.monotonic() + 20, call_ref="call-1"
                    )
                request = Request(
                    prompt=prompt,
                    context=[unit_to_context_item(u) for u in units],
                    op=op,
                    payload=payload,
                    budget=Budget(llmCalls=allowed, deadlineMs=20000),
                    llm=access,
                    requestId="req-1",
                    frameId="frame-0",
                )
                try:
                    result = (await supervisor.call(plugin_id, request, timeout_s=20)).document
                except PluginCallError as err:
                    result = err
                if access is not None:
                    bridge.release(access.apiKey)
                return result, bridge.drain_events("req-1")
        finally:
            store.close()

    return anyio.run(main)


def user_messages(llm: ScriptedLLM, index: int) -> list[str]:
    return [m["content"] for m in llm.bodies[index]["messages"] if m["role"] == "user"]


@dataclass
class Scripted:
    """What one scripted call gave: the plugin's document (or PluginCallError), the bridge's events, the
    request bodies the server received and each body's user messages."""

    doc: Any
    events: list
    bodies: list[dict[str, Any]]
    users: list[list[str]]


def scripted(
    tmp_path: Path, plugin_id: str, op: str, prompt: str, payload: Any, *answers: str, **kwargs: Any
) -> Scripted:
    """`run` against a scripted server that gives `answers` in turn (kwargs go to `run`)."""
    with ScriptedLLM() as llm:
        llm.push(*(reply(a) for a in answers))
        doc, events = run(llm, tmp_path, plugin_id, op, prompt, payload, **kwargs)
        return Scripted(doc, events, list(llm.bodies), [user_messages(llm, i) for i in range(llm.count)])


def numbered_unit(n: int, source: str, topic: str, claim: str) -> KnowledgeUnit:
    """Evidence unit number n of `source` (one unit per chunk)."""
    return KnowledgeUnit(
        id=f"{source}::chunk-{n:03d}::unit-001",
        sourceId=source,
        chunkId=f"{source}::chunk-{n:03d}",
        kuType="atomic",
        role="Description",
        topic=topic,
        claim=claim,
    )
