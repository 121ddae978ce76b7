"""The store on both backends (the `store` fixture runs each test on SQLite and on a throwaway PostgreSQL):
schema versioning, transactions, KB ids, sessions, turns, planner stats. Tests of one backend's own
mechanics (SQLite's pragmas and user_version migrations, PostgreSQL's advisory-locked ones) say so."""

from __future__ import annotations

import re
import sqlite3
import threading

import msgspec
import pytest
from mrpvm.kernel import store_conn, store_rows, store_sessions
from mrpvm.kernel.errors import (
    KbExists,
    KbNotFound,
    KernelError,
    SessionNotFound,
    SourceNotFound,
    StoreError,
    TurnNotFound,
    ValidationFailed,
)
from mrpvm.kernel.records import PlannerOutcome, SourceRecord, TurnRecord
from mrpvm.kernel.store import SCHEMA_VERSION, Store
from mrpvm.kernel.store_rows import unit_row
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins


def ku(
    uid: str, claim: str, *, source: str = "src", kind: str = "atomic", digest: str | None = None
) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId=source,
        chunkId=f"{source}::chunk-000",
        kuType=kind,
        role="Description",
        topic="t",
        claim=claim,
        hash=digest,
    )


def units_for(source_id: str, n: int, tag: str) -> list[KnowledgeUnit]:
    return [
        ku(f"{source_id}::chunk-000::unit-{i:03d}", f"{tag} claim {i}.", source=source_id) for i in range(n)
    ]


@pytest.fixture
def store(tmp_path, store_env):
    s = Store.open(tmp_path, store_env)
    yield s
    s.close()


@pytest.fixture
def reopen(tmp_path, store_env):
    """Another store on the same database (another kernel process, or another node)."""
    return lambda node="": Store.open(tmp_path, {**store_env, **({"MRPVM_NODE_ID": node} if node else {})})


def count(store: Store, table: str) -> int:
    return int(store._conn().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def schema_dump(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return sorted(
            conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        )


# --------------------------------------------------------------------------- schema and migrations


def test_schema_version_and_pragmas(tmp_path):
    store = Store.open(tmp_path)  # SQLite's own settings
    assert store.schema_version() == SCHEMA_VERSION >= 1 and store.backend == "sqlite"
    store.close()
    conn = sqlite3.connect(tmp_path / "mrpvm.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"kbs", "sources", "units", "sessions", "turns", "planner_stats", "llm_cache"} <= tables
    conn.close()


def test_reopening_is_idempotent_and_keeps_data(tmp_path):
    s = Store.open(tmp_path)
    kb = s.create_kb("docs")
    s.close()
    before = schema_dump(tmp_path / "mrpvm.db")
    for _ in range(3):
        s = Store.open(tmp_path)
        assert s.schema_version() == SCHEMA_VERSION
        assert s.get_kb("docs") == kb
        s.close()
    assert schema_dump(tmp_path / "mrpvm.db") == before


def test_migration_brings_an_old_database_up_and_keeps_rows(tmp_path, monkeypatch):
    s = Store.open(tmp_path)
    kb = s.create_kb("docs")
    s.close()
    extra = ["ALTER TABLE kbs ADD COLUMN note TEXT NOT NULL DEFAULT ''", "CREATE INDEX kbs_note ON kbs(note)"]
    monkeypatch.setattr(store_conn, "MIGRATIONS", [*store_rows.MIGRATIONS, extra])
    monkeypatch.setattr(store_conn, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    s = Store.open(tmp_path)
    assert s.schema_version() == SCHEMA_VERSION + 1
    assert s.get_kb(kb.id).name == "docs"
    cols = [r[1] for r in sqlite3.connect(tmp_path / "mrpvm.db").execute("PRAGMA table_info(kbs)")]
    assert "note" in cols
    s.close()
    s = Store.open(tmp_path)  # running the migrations again changes nothing
    assert s.schema_version() == SCHEMA_VERSION + 1
    s.close()


def test_a_version_1_database_migrates_to_the_trimmed_indexes_with_its_rows(tmp_path):
    conn = sqlite3.connect(tmp_path / "mrpvm.db", isolation_level=None)
    for statement in store_rows.MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO kbs VALUES ('kb_1', 'docs', 'now')")
    conn.execute(
        "INSERT INTO sessions (id, created_at, updated_at, turn_count) VALUES ('ses_1', 'now', 'now', 0)"
    )
    row = unit_row(ku("c::1", "Known fact.", digest="h1"), kb_id=None, session_id="ses_1", source_id=None)
    conn.execute(
        "INSERT INTO units (id, kb_id, session_id, source_id, ku_type, hash, claim_key, data)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    conn.close()
    s = Store.open(tmp_path)
    try:
        assert s.schema_version() == SCHEMA_VERSION >= 2
        indexes = {
            r[0]
            for r in s._conn().execute(
                "SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='units'"
            )
        }
        assert indexes == {
            "units_kb_id",
            "units_session_id",
            "units_source",
            "units_session_claim",
            "units_session_hash",
        }
        assert [u.id for u in s.session_units("ses_1")] == ["c::1"]
        # the migrated indexes still deduplicate: same claim, then same hash
        assert (
            s.add_session_units("ses_1", [ku("c::2", "known  FACT."), ku("c::3", "Other.", digest="h1")]) == 0
        )
        assert s.integrity_check() == []
    finally:
        s.close()


def test_the_per_turn_queries_use_indexes(tmp_path):
    """Every lookup a turn makes is an index search, never a scan of units or turns (SQLite's planner)."""
    store = Store.open(tmp_path)
    conn = store._conn()
    queries = [
        ("SELECT claim_key FROM units WHERE session_id = ? AND claim_key IN (?, ?)", ("s", "a", "b")),
        ("SELECT hash FROM units WHERE session_id = ? AND hash IN (?, ?)", ("s", "a", "b")),
        ("SELECT id FROM units WHERE session_id = ? AND id IN (?, ?)", ("s", "a", "b")),
        ("SELECT pk, data FROM units WHERE session_id = ? AND pk > ? ORDER BY pk", ("s", 0)),
        (
            "SELECT u.pk, u.data FROM sessions s LEFT JOIN units u ON u.session_id = s.id AND u.pk > ?"
            " WHERE s.id = ? ORDER BY u.pk",
            (0, "s"),
        ),
        ("SELECT user_message FROM turns WHERE session_id = ? ORDER BY turn_index DESC LIMIT ?", ("s", 8)),
        ("SELECT data FROM units WHERE kb_id = ? ORDER BY pk", ("k",)),
        ("SELECT 1 FROM units WHERE source_id = ?", ("x",)),  # the sources -> units cascade
    ]
    for sql, args in queries:
        plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args)]
        assert any("USING" in step and "INDEX" in step for step in plan), (sql, plan)
        assert not any(step.startswith("SCAN") for step in plan), (sql, plan)
    store.close()


def test_failed_migration_leaves_the_previous_version(tmp_path, monkeypatch):
    Store.open(tmp_path).close()
    broken = ["ALTER TABLE kbs ADD COLUMN note TEXT", "CREATE TABLE kbs (x)"]  # second statement fails
    monkeypatch.setattr(store_conn, "MIGRATIONS", [*store_rows.MIGRATIONS, broken])
    monkeypatch.setattr(store_conn, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(sqlite3.OperationalError):
        Store.open(tmp_path)
    conn = sqlite3.connect(tmp_path / "mrpvm.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert "note" not in [r[1] for r in conn.execute("PRAGMA table_info(kbs)")]
    conn.close()


def test_a_newer_database_is_refused(tmp_path):
    Store.open(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "mrpvm.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(StoreError) as info:
        Store.open(tmp_path)
    assert info.value.code == "STORE_ERROR" and str(SCHEMA_VERSION + 5) in info.value.message


# --------------------------------------------------------------------------- KB repositories


def test_kb_ids_are_random_and_names_unique(store):
    kbs = [store.create_kb(f"kb{i}") for i in range(40)]
    ids = [kb.id for kb in kbs]
    assert len(set(ids)) == 40
    assert all(re.fullmatch(r"kb_[0-9a-f]{16}", i) for i in ids)
    assert sorted(ids) != ids or sorted(ids, reverse=True) != ids  # not a counter
    # 40 random 64-bit ids: every hex digit position varies
    assert all(len({i[3 + p] for i in ids}) > 1 for p in range(16))
    with pytest.raises(KbExists) as info:
        store.create_kb("kb3")
    assert info.value.status == 409 and info.value.code == "KB_EXISTS"
    assert store.get_kb(kbs[5].id) == store.get_kb("kb5") == kbs[5]
    with pytest.raises(KbNotFound) as missing:
        store.get_kb("nope")
    assert missing.value.status == 404
    assert [k.name for k in store.list_kbs()] == [f"kb{i}" for i in range(40)]


def test_delete_kb_cascades_to_sources_and_units(store):
    kb = store.create_kb("docs")
    session = store.create_session(kb.id)
    store.replace_source(
        kb.id, SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash="h"), units_for("a-1", 5, "a")
    )
    store.delete_kb("docs")
    assert count(store, "units") == 0 and count(store, "sources") == 0
    assert store.get_session(session.id).kbId is None  # the session survives without its KB
    assert store.integrity_check() == []


# --------------------------------------------------------------------------- sources and transactions


def test_replace_source_replaces_all_units_of_that_source_only(store):
    kb = store.create_kb("docs")
    store.replace_source(
        kb.id, SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash="h1"), units_for("a-1", 5, "old")
    )
    store.replace_source(
        kb.id, SourceRecord(id="b-1", kbId=kb.id, name="b.md", hash="hb"), units_for("b-1", 2, "b")
    )
    stored = store.replace_source(
        kb.id, SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash="h2"), units_for("a-1", 3, "new")
    )
    assert stored.unitCount == 3 and stored.hash == "h2"
    claims = sorted(u.claim for u in store.kb_units(kb.id))
    assert claims == sorted([f"new claim {i}." for i in range(3)] + [f"b claim {i}." for i in range(2)])
    assert store.kb_stats(kb.id) == {"sources": 2, "units": 5}
    assert [u.claim for u in store.kb_units(kb.id, "a-1")] == [f"new claim {i}." for i in range(3)]


def test_a_failing_replace_leaves_the_previous_version_whole(store):
    kb = store.create_kb("docs")
    store.replace_source(
        kb.id, SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash="h1"), units_for("a-1", 4, "old")
    )
    broken = units_for("a-1", 3, "new") + [ku("a-1::chunk-000::unit-001", "duplicate id", source="a-1")]
    with pytest.raises(ValidationFailed) as info:
        store.replace_source(kb.id, SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash="h2"), broken)
    assert info.value.status == 422
    assert store.get_source(kb.id, "a.md").hash == "h1"
    assert [u.claim for u in store.kb_units(kb.id)] == [f"old claim {i}." for i in range(4)]
    with pytest.raises(KbNotFound):
        store.replace_source("kb_missing", SourceRecord(id="z", kbId="kb_missing", name="z", hash="h"), [])


def test_transaction_rolls_back_every_statement_on_error(store):
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute("INSERT INTO kbs (id, name, created_at) VALUES ('kb_x', 'x', 'now')")
        raise RuntimeError("boom")
    assert store.find_kb("x") is None
    store.create_kb("y")  # the connection is usable after the rollback
    assert store.get_kb("y").name == "y"


def test_remove_source_and_source_ids(store):
    kb = store.create_kb("docs")
    new_id = store.source_id_for(kb.id, "notes/Design Notes.md")
    assert re.fullmatch(r"Design-Notes-[0-9a-f]{8}", new_id)
    store.replace_source(
        kb.id,
        SourceRecord(id=new_id, kbId=kb.id, name="Design Notes.md", hash="h"),
        units_for(new_id, 2, "x"),
    )
    assert store.source_id_for(kb.id, "Design Notes.md") == new_id  # stable across re-ingests
    removed = store.remove_source(kb.id, "Design Notes.md")
    assert removed.id == new_id and store.kb_stats(kb.id) == {"sources": 0, "units": 0}
    with pytest.raises(SourceNotFound):
        store.remove_source(kb.id, "Design Notes.md")


# --------------------------------------------------------------------------- sessions and turns


def test_sessions_units_dedup_and_preferences(store):
    kb = store.create_kb("docs")
    session = store.create_session("docs", Pins(kb="kb-fast"))
    assert session.kbId == kb.id and session.preferences == Pins(kb="kb-fast") and session.turnCount == 0
    first = [ku("s::1", "Water boils at 100 C."), ku("s::2", "Ice melts.", digest="hash-ice")]
    assert store.add_session_units(session.id, first) == 2
    again = [
        ku("s::3", "  water   BOILS at 100 C. "),  # same claim, other id and spacing
        ku("s::4", "Different words entirely.", digest="hash-ice"),  # same hash
        ku("s::5", "Steam rises."),
        ku("s::6", "Steam rises."),  # duplicate within the batch
    ]
    assert store.add_session_units(session.id, again) == 1
    assert [u.id for u in store.session_units(session.id)] == ["s::1", "s::2", "s::5"]
    with pytest.raises(ValidationFailed):
        store.add_session_units(session.id, [ku("s::1", "A new claim under a used id.")])
    assert len(store.session_units(session.id)) == 3
    with pytest.raises(SessionNotFound) as info:
        store.session_units("ses_missing")
    assert info.value.status == 404


def turn(session_id: str, request_id: str, **kw) -> TurnRecord:
    return TurnRecord(
        requestId=request_id,
        sessionId=session_id,
        userMessage=f"question {request_id}",
        responseMarkdown="## Answer",
        responseDocument={"groups": [{"status": "success"}]},
        trace={"nodes": [{"id": "n1"}], "edges": []},
        pluginIds={"kb": "kb-fast"},
        llmCalls=1,
        durationMs=12.5,
        **kw,
    )


def test_commit_turn_promotes_units_deduplicated_and_appends_history(store):
    session = store.create_session()
    store.add_session_units(session.id, [ku("c::1", "Known fact.")])
    staged = [ku("t1::1", "Known fact."), ku("t1::2", "New fact."), ku("t1::3", "New fact.")]
    stored = store.commit_turn(turn(session.id, "req-1", turnIndex=99), staged, Pins(gs="gs-symbolic"))
    assert stored.turnIndex == 0  # the store numbers turns
    assert [u.id for u in store.session_units(session.id)] == ["c::1", "t1::2"]
    record = store.get_session(session.id)
    assert record.turnCount == 1 and record.preferences == Pins(gs="gs-symbolic")
    store.commit_turn(turn(session.id, "req-2"), [ku("t2::1", "Third fact.")], None)
    got = store.get_turn("req-2")
    assert got.turnIndex == 1 and got.trace == {"nodes": [{"id": "n1"}], "edges": []}
    assert got.responseDocument == {"groups": [{"status": "success"}]} and got.pluginIds == {"kb": "kb-fast"}
    assert [t.requestId for t in store.list_turns(session.id)] == ["req-1", "req-2"]
    assert store.get_session(session.id).preferences == Pins(gs="gs-symbolic")  # None keeps preferences


def test_list_turns_pages_in_either_order_and_keeps_the_truncation_flag(store):
    session = store.create_session()
    for n in range(7):
        store.commit_turn(turn(session.id, f"req-{n}", answerTruncated=n == 3), [], None)
    ids = lambda turns: [t.requestId for t in turns]  # noqa: E731
    assert ids(store.list_turns(session.id, limit=3)) == ["req-0", "req-1", "req-2"]
    assert ids(store.list_turns(session.id, start=5)) == ["req-5", "req-6"]
    assert ids(store.list_turns(session.id, start=5, limit=1)) == ["req-5"]
    assert ids(store.list_turns(session.id, descending=True, limit=2)) == ["req-6", "req-5"]
    assert ids(store.list_turns(session.id, start=1, descending=True)) == ["req-1", "req-0"]
    assert store.list_turns(session.id, start=99) == [] and store.list_turns(session.id, limit=0) == []
    assert [t.answerTruncated for t in store.list_turns(session.id)] == [n == 3 for n in range(7)]
    assert store.get_turn("req-3").answerTruncated and not store.get_turn("req-2").answerTruncated
    with pytest.raises(SessionNotFound):
        store.list_turns("ses_missing", limit=1)


def test_update_turn_trace_replaces_only_that_turns_trace(store, reopen):
    session = store.create_session()
    store.commit_turn(turn(session.id, "req-1"), [], None)
    store.commit_turn(turn(session.id, "req-2"), [], None)
    finished = {"nodes": [{"id": "n1", "status": "success", "output": {"result": "learned"}}], "edges": []}
    store.update_turn_trace("req-1", finished)
    assert store.get_turn("req-1").trace == finished
    assert store.get_turn("req-2").trace == {"nodes": [{"id": "n1"}], "edges": []}
    other = reopen()  # durable: another connection sees it
    try:
        assert other.get_turn("req-1").trace == finished
        assert other.get_turn("req-1").responseMarkdown == "## Answer"
    finally:
        other.close()
    with pytest.raises(TurnNotFound):
        store.update_turn_trace("req-missing", finished)


def test_turn_indexes_follow_the_session_count_with_and_without_preferences(store):
    session = store.create_session()
    indexes = [
        store.commit_turn(
            turn(session.id, f"req-{i}"), [], Pins(gs="gs-symbolic") if i % 2 else None
        ).turnIndex
        for i in range(4)
    ]
    assert indexes == [0, 1, 2, 3] and store.get_session(session.id).turnCount == 4
    with pytest.raises(SessionNotFound):
        store.commit_turn(turn("ses_missing", "req-x"), [], None)


def test_a_failing_commit_changes_nothing(store):
    session = store.create_session()
    store.commit_turn(turn(session.id, "req-1"), [ku("t1::1", "Fact one.")], None)
    with pytest.raises(ValidationFailed):  # same request id again: the whole commit is refused
        store.commit_turn(turn(session.id, "req-1"), [ku("t2::1", "Fact two.")], Pins(kb="kb-balanced"))
    record = store.get_session(session.id)
    assert record.turnCount == 1 and record.preferences == Pins()
    assert [u.claim for u in store.session_units(session.id)] == ["Fact one."]
    with pytest.raises(TurnNotFound):
        store.get_turn("req-2")
    with pytest.raises(SessionNotFound):
        store.commit_turn(turn("ses_missing", "req-9"), [], None)


def test_a_turn_in_a_drafted_session_is_one_transaction(store):
    kb = store.create_kb("docs")
    draft = store.draft_session("docs", Pins(kb="kb-fast"))
    assert draft.kbId == kb.id and draft.id not in {s.id for s in store.list_sessions()}  # not stored yet
    outcomes = [PlannerOutcome("planner-a", True, 40.0), PlannerOutcome("planner-b", False, 90.0)]
    stored = store.commit_turn(
        turn(draft.id, "req-1"),
        [ku("t1::1", "Fact one.")],
        Pins(gs="gs-a"),
        session=draft,
        planner_outcomes=outcomes,
    )
    assert stored.turnIndex == 0
    session = store.get_session(draft.id)
    assert session.turnCount == 1 and session.kbId == kb.id and session.preferences == Pins(gs="gs-a")
    assert session.createdAt == draft.createdAt
    assert [u.id for u in store.session_units(draft.id)] == ["t1::1"]
    stats = store.planner_stats()
    assert stats["planner-a"].samples == 1 and stats["planner-a"].successRate == pytest.approx(0.65)
    assert stats["planner-a"].latencyMs == pytest.approx(40.0)
    assert stats["planner-b"].successRate == pytest.approx(0.35)
    # the draft again (a caller retrying with it) is the existing session: the turn is appended
    store.commit_turn(turn(draft.id, "req-2"), [], None, session=draft, planner_outcomes=outcomes[:1])
    again = store.get_session(draft.id)
    assert again.turnCount == 2 and again.preferences == Pins(gs="gs-a")
    assert store.planner_stats()["planner-a"].successRate == pytest.approx(0.7 * 0.65 + 0.3)
    with pytest.raises(ValidationFailed):  # a turn must belong to the session it brings
        store.commit_turn(turn("ses_other", "req-3"), [], None, session=draft)


def test_a_failing_turn_commit_leaves_no_session_units_or_planner_stats(store):
    session = store.create_session()
    store.commit_turn(turn(session.id, "req-1"), [], None)
    draft = store.draft_session()
    with pytest.raises(ValidationFailed):  # the request id is taken: the whole turn is refused
        store.commit_turn(
            turn(draft.id, "req-1"),
            [ku("t2::1", "Fact two.")],
            Pins(kb="kb-a"),
            session=draft,
            planner_outcomes=[PlannerOutcome("planner-a", True, 5.0)],
        )
    assert [s.id for s in store.list_sessions()] == [session.id]
    assert store.planner_stats() == {}
    with pytest.raises(SessionNotFound):
        store.session_units(draft.id)


def test_recent_user_messages_are_the_last_n_oldest_first(store):
    session = store.create_session()
    assert store.recent_user_messages(session.id, 8) == []
    for i in range(5):
        store.commit_turn(turn(session.id, f"req-{i}"), [], None)
    assert store.recent_user_messages(session.id, 3) == ["question req-2", "question req-3", "question req-4"]
    assert store.recent_user_messages(session.id, 50) == [t.userMessage for t in store.list_turns(session.id)]
    assert store.recent_user_messages(session.id, 0) == []
    with pytest.raises(SessionNotFound):
        store.recent_user_messages("ses_missing", 8)


def test_session_units_see_writes_from_another_connection_and_deletion(store, reopen):
    session = store.create_session()
    store.add_session_units(session.id, [ku("a::1", "First.")])
    assert [u.id for u in store.session_units(session.id)] == ["a::1"]
    other = reopen()  # another kernel process on the same database
    try:
        other.commit_turn(turn(session.id, "req-1"), [ku("a::2", "Second."), ku("a::3", "Third.")], None)
        noise = other.create_session()
        other.add_session_units(noise.id, [ku("n::1", "Elsewhere.")])
        store.add_session_units(session.id, [ku("a::4", "Fourth.")])
        assert [u.id for u in store.session_units(session.id)] == ["a::1", "a::2", "a::3", "a::4"]
        listed = store.session_units(session.id)
        listed.clear()  # callers get their own list
        assert len(store.session_units(session.id)) == 4
        other.delete_session(session.id)
    finally:
        other.close()
    with pytest.raises(SessionNotFound):
        store.session_units(session.id)


def test_session_units_stay_right_when_the_unit_cache_overflows(store, monkeypatch):
    monkeypatch.setattr(store_sessions, "SESSION_CACHE_UNITS", 3)
    a, b = store.create_session(), store.create_session()
    store.add_session_units(a.id, [ku("a::1", "A one."), ku("a::2", "A two.")])
    store.add_session_units(b.id, [ku("b::1", "B one."), ku("b::2", "B two."), ku("b::3", "B three.")])
    for _ in range(2):  # each read evicts the other session
        assert [u.id for u in store.session_units(a.id)] == ["a::1", "a::2"]
        assert [u.id for u in store.session_units(b.id)] == ["b::1", "b::2", "b::3"]
    store.add_session_units(a.id, [ku("a::3", "A three."), ku("a::4", "A four.")])  # larger than the cache
    assert [u.id for u in store.session_units(a.id)] == ["a::1", "a::2", "a::3", "a::4"]
    assert [u.id for u in store.session_units(a.id)] == ["a::1", "a::2", "a::3", "a::4"]
    # the running count of cached units (kept instead of summing every session per read) stays exact
    assert store._cached_units == sum(len(u) for _, u in store._session_cache.values())
    store.session_units(b.id)
    store.delete_session(a.id)
    assert store._cached_units == sum(len(u) for _, u in store._session_cache.values()) == 3


def test_delete_session_removes_its_units_and_turns(store):
    session = store.create_session()
    store.commit_turn(turn(session.id, "req-1"), [ku("t1::1", "Fact one.")], None)
    store.delete_session(session.id)
    assert count(store, "units") == 0 and count(store, "turns") == 0
    assert store.list_sessions() == []


# --------------------------------------------------------------------------- planner stats, cache, threads


def test_planner_outcomes_are_an_ewma(store):
    alpha = 0.3
    rate, latency = 0.5, None
    for success, ms in [(True, 100.0), (False, 300.0), (True, 50.0), (True, 80.0)]:
        stats = store.record_planner_outcome("planner-default", success, ms, alpha=alpha)
        rate = (1 - alpha) * rate + alpha * (1.0 if success else 0.0)
        latency = ms if latency is None else (1 - alpha) * latency + alpha * ms
        assert stats.successRate == pytest.approx(rate) and stats.latencyMs == pytest.approx(latency)
    table = store.planner_stats()
    assert table["planner-default"].samples == 4 and table["planner-default"].successRate == pytest.approx(
        rate
    )
    with pytest.raises(ValidationFailed):
        store.record_planner_outcome("p", True, 1.0, alpha=0.0)


def test_llm_cache_round_trip(store):
    assert store.cache_get("k") is None
    store.cache_put("k", "m1", "first")
    store.cache_put("k", "m1", "second")
    assert store.cache_get("k") == "second"


def test_each_thread_gets_its_own_connection(store):
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(15):
                s = store.create_session()
                store.commit_turn(turn(s.id, f"req-{n}-{i}"), [ku(f"u{n}-{i}", f"fact {n} {i}")], None)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    sessions = store.list_sessions()
    assert len(sessions) == 60 and all(s.turnCount == 1 for s in sessions)


def test_errors_carry_code_status_and_details():
    err = KbNotFound("no KB 'x'", {"kb": "x"})
    assert isinstance(err, KernelError) and err.to_dict() == {
        "code": "KB_NOT_FOUND",
        "message": "no KB 'x'",
        "details": {"kb": "x"},
    }
    legacy = SessionNotFound("SESSION_NOT_FOUND", "no session", {"session": "s"})  # base-style arguments
    assert (
        legacy.code == "SESSION_NOT_FOUND"
        and legacy.message == "no session"
        and legacy.details == {"session": "s"}
    )
    assert msgspec.json.decode(msgspec.json.encode(err.to_dict()))["code"] == "KB_NOT_FOUND"


# --------------------------------------------------------------------------- several writers, several nodes


def test_postgresql_migrations_match_sqlite_and_concurrent_opens_agree(pg_url, tmp_path):
    from mrpvm.kernel.db.pg_schema import PG_MIGRATIONS

    assert len(PG_MIGRATIONS) == len(store_rows.MIGRATIONS) == SCHEMA_VERSION
    env = {"MRPVM_STORE_URL": pg_url}
    stores: list[Store] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(Store.open(tmp_path, env))  # all race to migrate an empty database
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(stores) == 4
    assert {s.schema_version() for s in stores} == {SCHEMA_VERSION}
    stores[0].create_kb("docs")
    assert [k.name for k in stores[3].list_kbs()] == ["docs"]
    with stores[0].transaction() as conn:
        conn.execute("UPDATE mrpvm_schema SET version = ?", (SCHEMA_VERSION + 2,))
    for s in stores:
        s.close()
    with pytest.raises(StoreError) as info:
        Store.open(tmp_path, env)
    assert str(SCHEMA_VERSION + 2) in info.value.message and "user:" not in info.value.message


def test_a_failed_postgresql_migration_leaves_the_previous_version(pg_url, tmp_path, monkeypatch):
    from mrpvm.kernel.db import pg_schema

    env = {"MRPVM_STORE_URL": pg_url}
    Store.open(tmp_path, env).close()
    broken = ["ALTER TABLE kbs ADD COLUMN note TEXT", "CREATE TABLE kbs (x INTEGER)"]
    monkeypatch.setattr(store_conn, "PG_MIGRATIONS", [*pg_schema.PG_MIGRATIONS, broken])
    monkeypatch.setattr(store_conn, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(Exception, match="already exists"):
        Store.open(tmp_path, env)
    monkeypatch.setattr(store_conn, "SCHEMA_VERSION", SCHEMA_VERSION)
    with Store.open(tmp_path, env) as s:
        assert s.schema_version() == SCHEMA_VERSION
        columns = (
            s._conn()
            .execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'kbs'")
            .fetchall()
        )
        assert "note" not in {c[0] for c in columns}


def test_a_later_commit_with_a_lower_key_is_not_skipped_by_the_session_unit_cache(store, reopen):
    """Regression (found on PostgreSQL): the cache reads a session's units past the highest key it has
    seen. A writer that took a lower key but commits later must not be skipped: a session's unit writers
    are ordered by its row lock, so a second writer waits for the first instead of overtaking it."""
    session = store.create_session()
    store.add_session_units(session.id, [ku("r::0", "Before.")])
    assert [u.id for u in store.session_units(session.id)] == ["r::0"]
    slow, fast = reopen(), reopen()  # two other kernels writing to the same session
    holding, release, fast_done = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def first() -> None:  # takes its keys, then holds its transaction open
        try:
            with slow.transaction() as conn:
                assert slow._lock_row(conn, "sessions", session.id)
                from mrpvm.kernel.store_rows import insert_session_units

                insert_session_units(conn, session.id, [ku("r::1", "Slow writer.")])
                holding.set()
                release.wait(30)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    def second() -> None:
        try:
            fast.add_session_units(session.id, [ku("r::2", "Fast writer.")])
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)
        fast_done.set()

    a = threading.Thread(target=first)
    a.start()
    assert holding.wait(30)
    b = threading.Thread(target=second)
    b.start()
    fast_done.wait(2.0)  # a broken store lets the second writer commit now, past the first's keys
    seen_between = [u.id for u in store.session_units(session.id)]  # caches the highest key it saw
    release.set()
    a.join()
    b.join()
    slow.close()
    fast.close()
    assert errors == []
    assert seen_between == ["r::0"]  # neither later write is visible before the first commits
    assert [u.id for u in store.session_units(session.id)] == ["r::0", "r::1", "r::2"]
    assert store.integrity_check() == []


def test_concurrent_ingests_of_one_source_name_replace_each_other(store, reopen):
    kb = store.create_kb("docs")
    writers = [reopen() for _ in range(4)]
    errors: list[BaseException] = []

    def ingest(n: int) -> None:
        try:
            for i in range(5):
                units = units_for("a-1", 3, f"w{n}v{i}")
                writers[n].replace_source(
                    kb.id, SourceRecord(id="a-1", kbId=kb.id, name="a.md", hash=f"h{n}{i}"), units
                )
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=ingest, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w in writers:
        w.close()
    assert errors == []
    (source,) = store.list_sources(kb.id)
    assert store.kb_stats(kb.id) == {"sources": 1, "units": 3}
    tags = {u.claim.split(" ")[0] for u in store.kb_units(kb.id)}
    assert tags == {f"w{source.hash[1]}v{source.hash[2]}"}  # the units are the stored version's, whole
    assert store.integrity_check() == []


def test_the_store_names_its_backend_and_node_without_credentials(store, store_env, tmp_path):
    assert store.backend == ("postgresql" if store_env else "sqlite")
    assert store.node_id and (tmp_path / "node-id").read_text().strip() == store.node_id
    described = store.describe()
    assert described.startswith("postgresql://mrpvm@/" if store_env else "sqlite:")
    with Store.open(tmp_path, {**store_env, "MRPVM_NODE_ID": "node-b"}) as other:
        assert other.node_id == "node-b"
    from mrpvm.kernel.db import describe_url

    assert describe_url("postgresql://app:s3cret@db.example:5433/mrpvm?sslmode=require&password=x") == (
        "postgresql://app@db.example:5433/mrpvm"
    )
    with pytest.raises(KernelError):
        Store.open(tmp_path, {**store_env, "MRPVM_NODE_ID": "../etc"})
    with pytest.raises(StoreError):
        Store.open(tmp_path, {"MRPVM_STORE_URL": "mysql://x@y/z"})
