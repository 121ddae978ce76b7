"""LLM calls per turn for each plugin combination, and the failure modes, measured at the upstream.

    .venv/bin/python bench/llm_calls_per_turn.py

Each combination runs in a fresh home (empty cache) with kernel default orders (no planner), kb-fast over
a small KB, the default budget (maxLLMCalls 8) and the scripted upstream of tests/support/llm_server.py answering
as a cooperative model (tests/llm_engine_support.FakeModel). `upstream` counts HTTP requests the test
server received (retries included); `charged` is the request budget the turn used (TurnResult.llm_calls); `skipped` plugin calls the engine
did not start for budget; `refused` LLM calls the bridge answered 429 (budget) without going upstream;
`accepted` groups whose answer val-llm accepted.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from llm_engine_support import QUESTION, FakeModel, LLMHarness, ask, dead_url  # noqa: E402
from llm_server import ScriptedLLM  # noqa: E402

THREE = "What is WAL mode? What does a checkpoint do? Does WAL mode work on a network filesystem?"
COMBOS = {
    "symbolic + val-llm": ("sd-symbolic", "gs-symbolic"),
    "fast": ("sd-llm-fast", "gs-llm-fast"),
    "deep": ("sd-llm-deep", "gs-llm-deep"),
    "mixed sd-fast/gs-deep": ("sd-llm-fast", "gs-llm-deep"),
    "mixed sd-symbolic/gs-fast": ("sd-symbolic", "gs-llm-fast"),
}


def measure(sd: list[str], gs: list[str], message: str, upstream, model=None) -> dict:
    with ScriptedLLM() as llm:
        llm.responder = model or FakeModel()
        target = llm if upstream == "scripted" else upstream
        with tempfile.TemporaryDirectory() as tmp:
            harness = LLMHarness(
                Path(tmp),
                enabled=[*sd, "kb-fast", *gs, "val-llm"],
                orders={"sd": sd, "kb": ["kb-fast"], "gs": gs, "val": ["val-llm"]},
                upstream=target,
            )

            async def main():
                ctx, kb_id = await harness.open()
                try:
                    started = time.perf_counter()
                    result = await ask(ctx, kb_id, message)
                    return result, (time.perf_counter() - started) * 1000
                finally:
                    await ctx.aclose()

            result, ms = anyio.run(main)
        skipped = sum(
            1
            for n in result.execution_trace["nodes"]
            if n["kind"] == "plugin" and n.get("status") == "skipped-budget"
        )
        refused = sum(
            1 for n in result.execution_trace["nodes"] if n["kind"] == "llm" and n.get("status") == "refused"
        )
        groups = result.response_document["groups"]
        return {
            "refused": refused,
            "accepted": f"{sum(g['validation'] == 'accepted' for g in groups)}/{len(groups)}",
            "upstream": llm.count if upstream == "scripted" else 0,
            "charged": result.llm_calls,
            "status": result.status,
            "sd": result.seed_detector_plugin,
            "gs": ",".join(sorted({g["plugins"].get("gs", "?") for g in groups})),
            "skipped": skipped,
            "ms": ms,
        }


def row(label: str, m: dict) -> None:
    print(
        f"{label:<46} upstream {m['upstream']:>2}  charged {m['charged']:>2}  skipped {m['skipped']}"
        f"  refused {m['refused']}  accepted {m['accepted']}  {m['status']:<7} sd={m['sd']} gs={m['gs']}"
        f"  {m['ms']:.0f} ms"
    )


def main() -> None:
    print("== per combination (answers accepted, first view sufficient)")
    for label, (sd, gs) in COMBOS.items():
        for n, message in ((1, QUESTION), (3, THREE)):
            row(f"{label}, N={n}", measure([sd], [gs], message, "scripted"))
    print("== failure modes (fast LLM plugins first, symbolic fallbacks after them), N=1")
    sd, gs = ["sd-llm-fast", "sd-symbolic"], ["gs-llm-fast", "gs-symbolic"]
    row("no endpoint", measure(sd, gs, QUESTION, None))
    row("dead endpoint (connection refused)", measure(sd, gs, QUESTION, dead_url()))
    junk = FakeModel(sd="junk", gs="ungrounded", val="junk")
    row("junk model (no CNL, no citations, no verdict)", measure(sd, gs, QUESTION, "scripted", junk))


if __name__ == "__main__":
    main()
