"""`make demo`: a real turn loop over an example document, with no LLM configured.

Uses a fresh data dir (`.mrpvm-demo/` in the repository, gitignored), loads `examples/tessel-build.md`
into a session as context, asks a few varied questions through the engine (`run_turn`: planners, seed
detection, retrieval, solving, validation, backtracking) and prints each Markdown answer with a
one-line trace summary. LLM plugins answer `unsupported` without an endpoint, so the symbolic path
serves; while a plugin is still partial, weak recovery still produces a response.
"""

from __future__ import annotations

import os
import shutil
import sys

from mrpvm.kernel.config import PROJECT_ROOT

DEMO_HOME = PROJECT_ROOT / ".mrpvm-demo"
EXAMPLE = PROJECT_ROOT / "examples" / "tessel-build.md"
QUESTIONS = (
    "How do I rebuild only the targets whose inputs changed?",
    "What happens when the needs of two targets form a cycle?",
    "How do I clean a broken cache?",
    "Why is the remote cache read-only for pull requests from forks, and where is the local cache kept?",
)


async def run_demo() -> int:
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.kernel.errors import KernelError
    from mrpvm.knowledge.context import open_context
    from mrpvm.knowledge.ingest import load_session_context
    from mrpvm.shells.trace_view import summary_line
    from rich.console import Console
    from rich.markdown import Markdown
    from rich.markup import escape
    from rich.rule import Rule

    console = Console()
    ctx = await open_context(dict(os.environ))
    try:
        session = ctx.store.create_session()
        text = EXAMPLE.read_text(encoding="utf-8")
        try:
            loaded = await load_session_context(ctx, session.id, text, EXAMPLE.name)
            console.print(
                f"[bold]MRP-VM demo[/] — loaded {len(loaded)} knowledge units from "
                f"{EXAMPLE.relative_to(PROJECT_ROOT)} into session {session.id} (no LLM configured)"
            )
        except KernelError as err:
            console.print(
                f"[yellow]could not load {EXAMPLE.name} as context ({err.code}: {err.message}); "
                "asking without it[/]"
            )
        for question in QUESTIONS:
            console.print(Rule(f"[bold]{question}[/]", align="left"))
            result = await run_turn(ctx, TurnRequest(message=question, session_id=session.id))
            console.print(Markdown(result.answer_markdown))
            used = " → ".join(
                p or "-"
                for p in (
                    result.planner_plugin,
                    result.seed_detector_plugin,
                    result.kb_plugin,
                    result.goal_solver_plugin,
                )
            )
            console.print(
                f"[dim]{escape(f'[{result.status}]')} {used} · {result.duration_ms:.0f} ms · "
                f"{escape(summary_line(result.execution_trace))}[/]"
            )
    finally:
        await ctx.aclose()
    console.print(
        f"[dim]inspect a turn: MRPVM_HOME={DEMO_HOME.relative_to(PROJECT_ROOT)} "
        ".venv/bin/mrpvm trace REQUEST_ID[/]"
    )
    return 0


def main() -> None:
    import anyio

    shutil.rmtree(DEMO_HOME, ignore_errors=True)
    os.environ["MRPVM_HOME"] = str(DEMO_HOME)
    for name in [n for n in os.environ if n.startswith("MRPVM_LLM_")]:
        del os.environ[name]  # the demo runs with no LLM
    sys.exit(anyio.run(run_demo))


if __name__ == "__main__":
    main()
