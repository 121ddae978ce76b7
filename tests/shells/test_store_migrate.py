"""`mrpvm store migrate --to URL`: a SQLite home's store copied whole into an empty PostgreSQL store, which then
serves as the same store (a real CLI process; a throwaway PostgreSQL)."""

from __future__ import annotations

import json

from cli_support import cli_env, mrpvm, one_error_line
from mrpvm.kernel.records import PlannerOutcome, SourceRecord, TurnRecord
from mrpvm.kernel.store import Store
from mrpvm.knowledge import index_ledger as ledger
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins


def ku(uid: str, claim: str, source: str = "s") -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId=source,
        chunkId=f"{source}::c",
        kuType="atomic",
        role="Description",
        topic="t",
        claim=claim,
    )


def everything(store: Store) -> dict:
    kb = store.get_kb("docs")
    sessions = store.list_sessions()
    return {
        "kbs": store.list_kbs(),
        "sources": store.list_sources(kb.id),
        "text": store.source_text("a-1"),
        "kb_units": store.kb_units(kb.id),
        "sessions": sessions,
        "session_units": [store.session_units(s.id) for s in sessions],
        "turns": [store.list_turns(s.id) for s in sessions],
        "planners": store.planner_stats(),
        "cache": store.cache_get("key-1"),
        "setting": store.get_setting("llm.roles"),
        "acks": ledger.acknowledgements(store, kb.id),
    }


def test_a_sqlite_home_moves_into_postgresql_whole(tmp_path, pg_url):
    home = tmp_path / "home"
    env = cli_env(home) | {"MRPVM_NODE_ID": "node-a"}
    with Store.open(home, env) as old:
        kb = old.create_kb("docs")
        source = old.replace_source(
            kb.id,
            SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash="h1"),
            [ku(f"a-1::u{i}", f"Fact {i}.", "a-1") for i in range(5)],
            text="# A\n\nFacts.",
        )
        assert ledger.record_ack(old, source, "kb-fast")
        session = old.create_session("docs", Pins(kb="kb-fast"))
        for n in range(3):
            old.commit_turn(
                TurnRecord(
                    requestId=f"req-{n}", sessionId=session.id, userMessage=f"q{n}", responseMarkdown="a"
                ),
                [ku(f"t::{n}", f"Said in turn {n}.", "turn")],
                planner_outcomes=[PlannerOutcome("planner-default", n != 1, 10.0 * n)],
            )
        old.cache_put("key-1", "m", "cached answer")
        old.set_setting("llm.roles", '{"defaultModel": "small"}')
        before = everything(old)

    out = mrpvm(env, "store", "migrate", "--to", pg_url, "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["rows"]["units"] == 8 and report["rows"]["turns"] == 3 and "mrpvm@" in report["target"]

    with Store.open(home, env | {"MRPVM_STORE_URL": pg_url}) as new:
        assert new.backend == "postgresql"
        assert everything(new) == before
        assert new.integrity_check() == []
        assert ledger.pending_sources(new, ["kb-fast"]) == []  # this node keeps the index it had
        nxt = new.commit_turn(
            TurnRecord(requestId="req-3", sessionId=session.id, userMessage="q3", responseMarkdown="a"),
            [ku("t::3", "Said in turn 3.", "turn")],
        )
        assert nxt.turnIndex == 3  # the copied keys and counters go on
        assert [u.id for u in new.session_units(session.id)][-1] == "t::3"

    again = mrpvm(env, "store", "migrate", "--to", pg_url, timeout=120)  # never into a store with data
    assert again.returncode == 1 and "empty store" in one_error_line(again)
    bad = mrpvm(env, "store", "migrate", "--to", "mysql://x@y/z", timeout=60)
    assert bad.returncode == 2 and "postgresql://" in one_error_line(bad)
    shown = mrpvm(env | {"MRPVM_STORE_URL": pg_url}, "store", "show", "--json", timeout=60)
    info = json.loads(shown.stdout)
    assert (
        info["backend"] == "postgresql" and info["node"] == "node-a" and info["nodes"] == []
    )  # none served yet
