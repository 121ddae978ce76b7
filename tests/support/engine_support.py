"""Shared helpers for the engine tests: a KernelContext over the scripted plugins in tests/engine_plugins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mrpvm.kernel.context import KernelContext
from mrpvm.kernel.engine import TurnRequest, TurnResult, run_turn
from mrpvm.knowledge.context import open_context

ENGINE_PLUGINS = Path(__file__).resolve().parent / "engine_plugins"
ALL_PLUGINS = sorted(p.stem for p in ENGINE_PLUGINS.glob("*.json"))

DEFAULT_ORDERS = {
    "sd": ["sd-a", "sd-b"],
    "kb": ["kb-a", "kb-b", "kb-c"],
    "gs": ["gs-a", "gs-b", "gs-c"],
    "val": ["val-a"],
}


def unit(
    uid: str, claim: str = "a claim", *, scopes: list[str] | None = None, role: str = "Description"
) -> dict:
    data: dict[str, Any] = {
        "id": uid,
        "sourceId": "turn",
        "chunkId": "turn::chunk-000",
        "kuType": "atomic",
        "role": role,
        "topic": uid,
        "claim": claim,
    }
    if scopes:
        data["phaseScopes"] = scopes
    return data


def intent(text: str, act: str = "explain") -> dict:
    return {"act": act, "intent": text, "output": "answer"}


class Harness:
    """Writes the script/config for one test and opens a context over the scripted plugins."""

    def __init__(
        self,
        tmp: Path,
        script: dict,
        *,
        orders: dict | None = None,
        planners=("planner-a", "planner-b"),
        budget: dict | None = None,
        enabled: list[str] | None = None,
    ):
        self.tmp = tmp
        self.home = tmp / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.script_path = tmp / "script.json"
        self.log_path = tmp / "calls.jsonl"
        self.counter_path = tmp / "counter.json"
        self.write_script(script)
        config: dict[str, Any] = {
            "plugins": {"stageOrders": {**DEFAULT_ORDERS, **(orders or {})}, "plannerOrder": list(planners)}
        }
        if budget:
            config["engine"] = {"budget": budget}
        (self.home / "config.json").write_text(json.dumps(config))
        self.environ = {
            "MRPVM_HOME": str(self.home),
            "MRPVM_ENABLED_PLUGINS": ",".join(enabled or ALL_PLUGINS),
            "MRPVM_PLUGIN_ALLOWLIST": "",
            "MRPVM_WRAPPER_FOLDERS": "",
            # The scripted plugins read their script and write their logs here (the home inside it
            # stays hidden from them: the sandbox mounts a tmpfs over it).
            "MRPVM_SANDBOX_WRITE_PATHS": str(tmp),
        }
        self.extra_env = {
            "MRPVM_TEST_SCRIPT": str(self.script_path),
            "MRPVM_TEST_LOG": str(self.log_path),
            "MRPVM_TEST_COUNTER": str(self.counter_path),
        }

    def write_script(self, script: dict) -> None:
        self.script_path.write_text(json.dumps(script))

    async def open(self) -> KernelContext:
        return await open_context(self.environ, manifests_dir=ENGINE_PLUGINS, extra_env=self.extra_env)

    def calls(self, plugin: str | None = None, op: str | None = None) -> list[dict]:
        if not self.log_path.exists():
            return []
        rows = [json.loads(line) for line in self.log_path.read_text().splitlines() if line.strip()]
        return [
            r for r in rows if (plugin is None or r["plugin"] == plugin) and (op is None or r["op"] == op)
        ]

    def mark(self, op: str) -> None:
        """Log the test's own step as a call by plugin "test": a rule's `waitCall` {"plugin": "test",
        "op": op} then waits for the test to reach it (a barrier on the test's side of the order)."""
        with self.log_path.open("a") as log:
            log.write(json.dumps({"plugin": "test", "op": op}) + "\n")

    def counter(self) -> dict:
        return json.loads(self.counter_path.read_text()) if self.counter_path.exists() else {}

    def ask(self, message: str, **kwargs: Any) -> TurnResult:
        async def go() -> TurnResult:
            ctx = await self.open()
            try:
                return await run_turn(ctx, TurnRequest(message=message, **kwargs))
            finally:
                await ctx.aclose()

        return anyio.run(go)


# --------------------------------------------------------------------------- trace queries


def nodes(result: TurnResult, **match: Any) -> list[dict]:
    return [n for n in result.execution_trace["nodes"] if all(n.get(k) == v for k, v in match.items())]


def edges(result: TurnResult, kind: str) -> list[tuple[str, str]]:
    return [(e["src"], e["dst"]) for e in result.execution_trace["edges"] if e["kind"] == kind]


def calls_in_order(result: TurnResult, op: str) -> list[tuple[str, str]]:
    """(pluginId, status) of every plugin node for an op, in trace order."""
    return [
        (n["pluginId"], n["status"])
        for n in result.execution_trace["nodes"]
        if n["kind"] == "plugin" and n.get("op") == op
    ]
