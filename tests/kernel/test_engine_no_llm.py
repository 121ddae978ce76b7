"""No LLM configured: the turn stages' LLM plugins are neither planned nor started, the trace says why
once, and the kernel never imports the LLM client (httpx)."""

from __future__ import annotations

import subprocess
import sys

from engine_support import Harness, intent, nodes
from mrpvm.kernel.engine import TurnRequest, run_turn

ENABLED = ["planner-a", "sd-a", "kb-a", "gs-a", "gs-llm"]
PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-llm", "gs-a"]}
SCRIPT = {
    "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {"solve": {"status": "no-context"}},
    "gs-llm": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
}


def test_without_an_llm_the_llm_plugins_are_not_planned_started_or_called(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            result = await run_turn(ctx, TurnRequest(message="what is alpha?"))
            again = await run_turn(ctx, TurnRequest(message="what is alpha?", session_id=result.session_id))
            return result, again, ctx.llm, ctx.supervisor.health()["gs-llm"]
        finally:
            await ctx.aclose()

    import anyio

    result, again, bridge, health = anyio.run(go)
    assert bridge is None
    assert h.calls("gs-llm") == []  # the plan put it first; the kernel never called it
    assert health["calls"] == 0 and health["spawns"] == 0 and health["workers"] == 0
    assert [c["op"] for c in h.calls("gs-a")] == ["solve", "solve"]
    plans = [c for c in h.calls("planner-a", "buildPlan") if c.get("descriptors")]
    assert plans and all("gs-llm" not in c["descriptors"] and "gs-a" in c["descriptors"] for c in plans)
    for turn in (result, again):
        said = [n for n in nodes(turn, kind="event") if "no LLM endpoint" in n["label"]]
        assert len(said) == 1 and "gs-llm" in said[0]["label"] and said[0]["status"] == "skipped"


def test_a_pinned_llm_plugin_is_still_called_when_asked_for_explicitly(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)
    from mrpvm.protocol.envelope import Pins

    result = h.ask("what is alpha?", pins=Pins(gs="gs-llm"))
    assert [c["op"] for c in h.calls("gs-llm")] == ["solve"]
    assert result.status in ("success", "weak")


def test_the_kernel_does_not_import_the_llm_client_without_an_llm(tmp_path):
    code = (
        "import anyio, sys\n"
        "from mrpvm.kernel.context import KernelContext\n"
        "async def go():\n"
        f"    ctx = await KernelContext.open({{'MRPVM_HOME': {str(tmp_path)!r}}})\n"
        "    await ctx.aclose()\n"
        "anyio.run(go)\n"
        "print(sorted(m for m in ('httpx', 'mrpvm.kernel.llm.bridge', 'mrpvm.kernel.llm.client') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
