"""A seed whose first knowledge view is weak starts the worker of the next kb-plugin its fallback may retrieve
from, and once that view differs from every view already solved, the workers of the rest at once
(kernel/engine/stages.py `prestart_views`), at most as many as the fallback budget has calls left: in a
one-turn process each used to start only when its retrieve came, one after another. A view that repeats an
earlier one ends the walk (seeds.py), so the later workers are not started for it.
The calls and the answer are the same; only when the workers start changes."""

from __future__ import annotations

import anyio
from engine_support import Harness, calls_in_order, intent, unit
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.knowledge.ingest import load_session_context
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

UNITS = [unit("session::t::unit-000", "Alpha is a widget"), unit("session::t::unit-001", "Beta is a gadget")]
SCRIPT = {
    "sd-a": {
        "detectSeeds": {"intents": [intent("what is omega")]},
        "normalizePersistentContext": {"units": UNITS},
    },
    "kb-a": {"retrieve": {"select": 1}, "onSessionEvent": {}},
    # views that differ (kb-b's is not kb-a's), so the walk does not stop at a repeated view (seeds.py)
    "kb-b": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "kb-c": {"retrieve": {"select": 1}, "onSessionEvent": {}},
    "gs-a": {"solve": {"status": "no-context", "answer": NO_CONTEXT_ANSWER}},
}

ONE_SOLVER = {"gs": ["gs-a"]}  # a weak view falls back to the next view at once


def ask_watching_starts(h: Harness) -> tuple[object, list[tuple[str, list[str]]]]:
    """The turn, and each worker start asked for after the turn began: (plugin, the retrieves made by then)."""
    seen: list[tuple[str, list[str]]] = []

    async def go():
        ctx = await h.open()
        prestart = ctx.supervisor.prestart

        def watched(plugin_id: str, artifacts: str | None = None) -> bool:
            started = prestart(plugin_id, artifacts)
            if started:
                seen.append((plugin_id, [c["plugin"] for c in h.calls(op="retrieve")]))
            return started

        try:
            # the question's source is the session's context (committed units, as `mrpvm ask --source`
            # loads it): no staged unit, so no notice starts a kb-plugin's worker before its retrieve
            session = ctx.store.create_session()
            await load_session_context(
                ctx, session.id, "Alpha is a widget. Beta is a gadget.", "f.md", "sd-a"
            )
            ctx.supervisor.prestart = watched
            return await run_turn(ctx, TurnRequest(message="what is omega?", session_id=session.id))
        finally:
            await ctx.aclose()

    return anyio.run(go), seen


def test_the_next_views_worker_starts_once_the_first_view_is_weak_the_rest_once_a_view_differs(tmp_path):
    result, seen = ask_watching_starts(Harness(tmp_path, SCRIPT, orders=ONE_SOLVER))
    assert calls_in_order(result, "retrieve") == [
        ("kb-a", "success"),
        ("kb-b", "success"),
        ("kb-c", "success"),
    ]
    assert result.status != "success"  # every view weak: the chain runs to its end, as before
    fallback = [(p, made) for p, made in seen if p in ("kb-b", "kb-c")]
    # kb-b right after kb-a's view proved weak; kb-c once kb-b's view (not kb-a's) came, before its solve
    assert fallback == [("kb-b", ["kb-a"]), ("kb-c", ["kb-a", "kb-b"])]


def test_a_view_that_repeats_the_first_starts_no_further_worker(tmp_path):
    script = {**SCRIPT, "kb-b": {"retrieve": {"select": 1}, "onSessionEvent": {}}}  # kb-a's unit again
    result, seen = ask_watching_starts(Harness(tmp_path, script, orders=ONE_SOLVER))
    assert [p for p, _ in calls_in_order(result, "retrieve")] == ["kb-a", "kb-b"]  # the views converged
    assert [p for p, _ in seen if p.startswith("kb-")] == ["kb-a", "kb-b"]  # kb-c's worker never started


def test_no_more_fallback_workers_start_than_the_budget_has_calls(tmp_path):
    h = Harness(tmp_path, SCRIPT, orders=ONE_SOLVER, budget={"maxFallbackCalls": 1})
    result, seen = ask_watching_starts(h)
    assert [p for p, _ in seen if p.startswith("kb-")] == ["kb-a", "kb-b"]  # kb-a: the plan's first
    assert [p for p, _ in calls_in_order(result, "retrieve")] == ["kb-a", "kb-b"]


def test_a_first_view_that_answers_starts_no_fallback_worker(tmp_path):
    script = {**SCRIPT, "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}}}
    result, seen = ask_watching_starts(Harness(tmp_path, script, orders=ONE_SOLVER))
    assert result.status == "success"
    assert [p for p, _ in seen if p.startswith("kb-")] == ["kb-a"]
