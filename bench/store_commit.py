"""The store's share of one turn, without plugins: what `run_turn` asks SQLite for, per turn.

A populated database (a KB of `--kb-units` units, `--sessions` sessions with a few turns each) is
built in a temp folder; then, per measured turn:

- new_session   a turn in a fresh session: session row + 3 staged units + the turn (a ~6.5 KB trace)
                + the planner-level EWMA. `legacy` = the separate calls (create_session,
                record_planner_outcome, commit_turn: 3 transactions); `combined` = one
                `commit_turn(..., session=, planner_outcomes=)` transaction.
- continuing    a turn in a session with `--history` turns: get_session, session_units, the history
                (legacy: list_turns decoding every trace; combined: recent_user_messages), then the commit.
- commit_only   commit_turn alone (3 units, the trace) in an existing session.

    .venv/bin/python bench/store_commit.py [--turns N] [--json]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mrpvm.kernel.records import PlannerOutcome, SourceRecord, TurnRecord
from mrpvm.kernel.store import Store, new_id
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins
from perfkit import print_figures


def unit(uid: str, claim: str, source: str = "turn") -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId=source,
        chunkId=f"{source}::chunk-000",
        kuType="atomic",
        role="Description",
        topic="bench",
        claim=claim,
    )


def trace(request_id: str) -> dict:
    """A trace shaped like a symbolic turn's (15 nodes, 18 edges, ~6.5 KB of JSON)."""
    nodes = [
        {
            "id": f"n{i}",
            "kind": "plugin" if i % 2 else "event",
            "label": f"call {i} of the benchmark turn {request_id}",
            "parent": f"n{i - 1}" if i else None,
            "frameId": "f1",
            "pluginId": f"plugin-{i % 5}",
            "status": "success",
            "durationMs": 1.234,
            "input": {"prompt": "How does the subject work? " * 3, "items": i},
            "output": {
                "summary": "The subject works as the claims say. " * 4,
                "units": [f"u{j}" for j in range(4)],
            },
        }
        for i in range(15)
    ]
    edges = [{"from": f"n{i}", "to": f"n{i + 1}", "kind": "next"} for i in range(14)]
    edges += [{"from": "n1", "to": f"n{i}", "kind": "uses"} for i in (3, 5, 7, 9)]
    return {"requestId": request_id, "nodes": nodes, "edges": edges}


def turn_record(session_id: str, n: int) -> TurnRecord:
    request_id = new_id("req")
    return TurnRecord(
        requestId=request_id,
        sessionId=session_id,
        userMessage=f"How does the subject work, question {n}?",
        responseMarkdown="## Answer\n\nThe subject works as the claims say.\n" * 4,
        responseDocument={"groups": [{"status": "success", "answerMarkdown": "The subject works."}] * 2},
        trace=trace(request_id),
        status="success",
        pluginIds={"planner": "planner-a", "sd": "sd-a", "kb": "kb-a", "gs": "gs-a"},
        durationMs=12.5,
    )


def staged(n: int) -> list[KnowledgeUnit]:
    return [
        unit(f"session::req{n}::unit-{i:03d}", f"Claim {i} of turn {n} about the subject.") for i in range(3)
    ]


def populate(store: Store, kb_units: int, sessions: int, turns_each: int) -> list[str]:
    kb = store.create_kb("bench")
    units = [unit(f"doc::chunk-000::unit-{i:05d}", f"Document claim {i}.", "doc") for i in range(kb_units)]
    store.replace_source(kb.id, SourceRecord(id="doc", kbId=kb.id, name="doc.md"), units)
    ids = []
    for s in range(sessions):
        session = store.create_session()
        for t in range(turns_each):
            store.commit_turn(turn_record(session.id, s * 100 + t), staged(s * 100 + t), Pins())
        ids.append(session.id)
    return ids


def timed(fn: Callable[[int], object], turns: int, warmup: int = 20) -> dict[str, float]:
    samples = []
    for n in range(warmup + turns):
        start = time.perf_counter()
        fn(n)
        if n >= warmup:
            samples.append((time.perf_counter() - start) * 1000.0)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p90_ms": round(samples[int(0.9 * (len(samples) - 1))], 3),
    }


def measure(turns: int, kb_units: int, sessions: int, history: int) -> dict:
    """The figures, in a temporary home that is removed afterwards (the database and its WAL files)."""
    tmp = Path(tempfile.mkdtemp(prefix="mrpvm-store-bench-"))
    try:
        return _measure_in(tmp, turns, kb_units, sessions, history)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _measure_in(tmp: Path, turns: int, kb_units: int, sessions: int, history: int) -> dict:
    store = Store.open(tmp)
    combined = hasattr(store, "recent_user_messages")
    try:
        populate(store, kb_units, sessions, 3)
        long = store.create_session()
        for t in range(history):
            store.commit_turn(turn_record(long.id, 10_000 + t), staged(10_000 + t), Pins())
        counter = [100_000]

        def next_n() -> int:
            counter[0] += 1
            return counter[0]

        def new_legacy(_: int) -> None:
            n = next_n()
            session = store.create_session()
            store.record_planner_outcome("planner-a", True, 10.0)
            store.commit_turn(turn_record(session.id, n), staged(n), Pins(planner="planner-a"))

        def new_combined(_: int) -> None:
            n = next_n()
            session = store.draft_session()
            store.commit_turn(
                turn_record(session.id, n),
                staged(n),
                Pins(planner="planner-a"),
                session=session,
                planner_outcomes=[PlannerOutcome("planner-a", True, 10.0)],
            )

        def continuing(session_id: str, legacy: bool) -> Callable[[int], None]:
            def run(_: int) -> None:
                n = next_n()
                session = store.get_session(session_id)
                store.session_units(session.id)
                if legacy:
                    [t.userMessage for t in store.list_turns(session.id)][-8:]
                    store.record_planner_outcome("planner-a", True, 10.0)
                    store.commit_turn(turn_record(session.id, n), staged(n), Pins())
                else:
                    store.recent_user_messages(session.id, 8)
                    store.commit_turn(
                        turn_record(session.id, n),
                        staged(n),
                        Pins(),
                        planner_outcomes=[PlannerOutcome("planner-a", True, 10.0)],
                    )

            return run

        def commit_only(_: int) -> None:
            n = next_n()
            store.commit_turn(turn_record(other.id, n), staged(n), Pins())

        other = store.create_session()
        figures: dict = {
            "turns": turns,
            "kb_units": kb_units,
            "sessions": sessions,
            "history_turns": history,
            "commit_only": timed(commit_only, turns),
            "new_session_legacy": timed(new_legacy, turns),
        }
        if combined:
            figures["new_session_combined"] = timed(new_combined, turns)
        figures["continuing_legacy"] = timed(continuing(long.id, True), turns)
        if combined:
            long2 = store.create_session()
            for t in range(history):
                store.commit_turn(turn_record(long2.id, 20_000 + t), staged(20_000 + t), Pins())
            figures["continuing_combined"] = timed(continuing(long2.id, False), turns)
        return figures
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--kb-units", type=int, default=20_000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--history", type=int, default=30, help="turns already in the continuing session")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = measure(args.turns, args.kb_units, args.sessions, args.history)
    print_figures(figures, args.json)


if __name__ == "__main__":
    main()
