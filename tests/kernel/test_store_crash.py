"""A kernel process killed with SIGKILL mid-turn leaves the store at its last committed state.

A real kernel (tests/support/turn_kill_driver.py over the scripted engine plugins) runs a turn in a session that
already holds two committed turns and is killed (1) while a goal solver is still working, before any
commit, and (2) inside the turn's commit transaction, held open by the test-only store hook
MRPVM_TEST_PAUSE_IN_COMMIT; then (3) a turn in a fresh session is killed inside its commit. Each time
the store must reopen consistent (integrity and foreign-key checks) with the earlier turns, units,
session and planner statistics exactly as committed, nothing of the killed turn, and stay writable.
On both backends; on PostgreSQL (no global write lock) another store commits a turn while the killed
kernel holds its transaction open, and keeps it.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from engine_support import Harness, intent, unit
from mrpvm.kernel.records import TurnRecord
from mrpvm.kernel.store import DB_NAME, Store
from mrpvm.protocol.document import KnowledgeUnit

DRIVER = Path(__file__).resolve().parents[1] / "support" / "turn_kill_driver.py"
PLUGINS = ["planner-a", "sd-a", "kb-a", "gs-a", "val-a"]
ORDERS = {"sd": ["sd-a"], "kb": ["kb-a"], "gs": ["gs-a"], "val": ["val-a"]}


def turn_rule(n: int, text: str) -> dict:
    return {
        "when": {"promptContains": f"turn {n}:"},
        "intents": [intent(text)],
        "units": [unit(f"session::t{n}::unit-{i:03d}", f"Claim {i} said in turn {n}.") for i in range(3)],
    }


SCRIPT = {
    "planner-a": {
        "buildPlan": {
            "plan": {"kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"], "validatorOrder": ["val-a"]}
        },
        "recordOutcome": {},
    },
    "sd-a": {
        "detectSeeds": [
            turn_rule(1, "what is the first subject"),
            turn_rule(2, "what is the second subject"),
            turn_rule(3, "SLOW question that keeps the solver busy"),
            turn_rule(4, "what is the fourth subject"),
            turn_rule(5, "what is the fifth subject"),
            turn_rule(6, "what is the sixth subject"),
        ]
    },
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {
        "solve": [
            {"when": {"promptContains": "SLOW"}, "sleepMs": 60_000, "answer": "too late"},
            {"answer": "Answered from the evidence.", "sources": "evidence"},
        ]
    },
    "val-a": {"validate": {"status": "accepted"}},
}


class Snapshot:
    """What the store holds for the test's session, read through a fresh Store (reopened each time)."""

    def __init__(self, h: Harness, session_id: str):
        store = Store.open(h.home, h.environ)
        try:
            self.problems = store.integrity_check()
            self.session = store.get_session(session_id)
            self.turns = store.list_turns(session_id)
            self.units = [u.id for u in store.session_units(session_id)]
            self.sessions = [s.id for s in store.list_sessions()]
            self.planners = store.planner_stats()
            conn = store._conn()
            self.all_units = [r[0] for r in conn.execute("SELECT id FROM units ORDER BY pk")]
            self.all_turns = [r[0] for r in conn.execute("SELECT request_id FROM turns ORDER BY request_id")]
        finally:
            store.close()


def start_driver(h: Harness, message: str, session_id: str | None, **env: str) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    environ.update(h.environ, **h.extra_env, **env)
    args = [sys.executable, "-u", str(DRIVER), message, *([session_id] if session_id else [])]
    out = open(h.tmp / "driver.out", "a")  # noqa: SIM115 - closed by kill()
    proc = subprocess.Popen(
        args, stdout=out, stderr=subprocess.STDOUT, env=environ, cwd=DRIVER.parent, start_new_session=True
    )
    proc.out = out  # type: ignore[attr-defined]
    return proc


def wait_until(proc: subprocess.Popen, h: Harness, ready, what: str, timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the driver exited ({proc.returncode}) before {what}: {driver_output(h)}")
        time.sleep(0.02)
    raise AssertionError(f"no {what} within {timeout} s: {driver_output(h)}")


def driver_output(h: Harness) -> str:
    path = h.tmp / "driver.out"
    return path.read_text()[-2000:] if path.exists() else ""


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL the kernel, then whatever of its process group (plugin workers) outlives it."""
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.out.close()  # type: ignore[attr-defined]


def write_lock_held(h: Harness) -> bool:
    """Whether another connection holds an open write transaction (SQLite: the database's write lock)."""
    if h.environ.get("MRPVM_STORE_URL"):
        with Store.open(h.home, h.environ) as store:
            row = store._conn().execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND state LIKE 'idle in transaction%'"
            )
            return int(row.fetchone()[0]) > 0
    conn = sqlite3.connect(h.home / DB_NAME, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as err:
        assert "locked" in str(err)
        return True
    finally:
        conn.close()


def solver_started(h: Harness, marker: str) -> bool:
    return any(marker in c["prompt"] for c in h.calls("gs-a", "solve"))


def wait_for(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(0.05)


def assert_unchanged(h: Harness, before: Snapshot, session_id: str) -> Snapshot:
    after = Snapshot(h, session_id)
    assert after.problems == []
    assert after.session == before.session  # turn count, preferences, updatedAt
    assert after.turns == before.turns  # every committed turn, with its document and trace, as it was
    assert after.units == before.units and after.all_units == before.all_units
    assert after.all_turns == before.all_turns and after.sessions == before.sessions
    assert after.planners == before.planners  # the killed turn's planner EWMA was in its transaction
    return after


@pytest.fixture
def harness(tmp_path, store_env) -> Harness:
    h = Harness(tmp_path, SCRIPT, orders=ORDERS, planners=("planner-a",), enabled=PLUGINS)
    h.environ.update(store_env)
    return h


def test_a_kernel_killed_mid_turn_leaves_the_last_committed_turns(harness):
    h = harness
    first = h.ask("turn 1: the first question")
    session_id = first.session_id
    second = h.ask("turn 2: the second question", session_id=session_id)
    assert first.status == second.status == "success"
    committed = Snapshot(h, session_id)
    assert [t.requestId for t in committed.turns] == [first.request_id, second.request_id]
    assert committed.session.turnCount == 2 and committed.planners["planner-a"].samples == 2
    assert committed.units == [f"session::t{n}::unit-{i:03d}" for n in (1, 2) for i in range(3)]

    # 1. killed while the goal solver works (the turn's units are staged, nothing is committed yet)
    proc = start_driver(h, "turn 3: a slow question", session_id)
    wait_until(proc, h, lambda: solver_started(h, "SLOW"), "the slow solve")
    assert not write_lock_held(h)
    kill(proc)
    assert_unchanged(h, committed, session_id)

    # 2. killed inside the commit transaction: rows written, COMMIT not reached
    paused = h.tmp / "paused-4"
    proc = start_driver(h, "turn 4: the fourth question", session_id, MRPVM_TEST_PAUSE_IN_COMMIT=str(paused))
    wait_until(proc, h, paused.exists, "the paused commit")
    assert write_lock_held(h)  # the turn's write transaction is open
    if h.environ.get("MRPVM_STORE_URL"):  # no global write lock: another kernel commits meanwhile
        with Store.open(h.home, h.environ) as other:
            fresh = other.draft_session()
            done = other.commit_turn(
                TurnRecord(requestId="req-other", sessionId=fresh.id, userMessage="q", responseMarkdown="a"),
                [msgspec.convert(unit("other::unit-000", "Another user's fact."), KnowledgeUnit)],
                session=fresh,
            )
        assert done.turnIndex == 0
        committed = Snapshot(h, session_id)
        assert "req-other" in committed.all_turns and "other::unit-000" in committed.all_units
    kill(proc)
    wait_for(lambda: not write_lock_held(h), "rollback of the killed kernel's transaction")
    assert_unchanged(h, committed, session_id)
    assert "committed" not in driver_output(h)

    # 3. a fresh session killed inside its commit: the session is not left behind either
    paused = h.tmp / "paused-5"
    proc = start_driver(h, "turn 5: the fifth question", None, MRPVM_TEST_PAUSE_IN_COMMIT=str(paused))
    wait_until(proc, h, paused.exists, "the paused commit")
    kill(proc)
    wait_for(lambda: not write_lock_held(h), "rollback of the killed kernel's transaction")
    assert_unchanged(h, committed, session_id)

    # 4. the store is writable again: the next turn of the session commits as its third turn
    third = h.ask("turn 6: the sixth question", session_id=session_id)
    after = Snapshot(h, session_id)
    assert after.problems == [] and third.status == "success"
    assert [t.requestId for t in after.turns] == [first.request_id, second.request_id, third.request_id]
    assert after.turns[:2] == committed.turns and after.turns[2].turnIndex == 2
    assert after.units == [*committed.units, *(f"session::t6::unit-{i:03d}" for i in range(3))]
    assert after.session.turnCount == 3 and after.planners["planner-a"].samples == 3
    assert not any("::t3::" in u or "::t4::" in u or "::t5::" in u for u in after.all_units)
