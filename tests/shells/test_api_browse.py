"""The routes the web app added (shells/api/browse_routes.py), the plugin descriptors it shows, the CNL each
trace node keeps, and the session title column (store migration 4), through a real daemon."""

from __future__ import annotations

import sqlite3

from api_support import FACTS, ask, new_session
from mrpvm.kernel import store_rows
from mrpvm.kernel.store import Store
from web_support import EXAMPLE, ingest_example


def test_a_session_is_renamed_and_a_blank_title_makes_it_untitled(http):
    session = new_session(http)
    assert http.get(f"/sessions/{session}").json()["title"] == ""
    renamed = http.patch(f"/sessions/{session}", json={"title": "  Cache   questions \n"})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Cache questions"
    assert http.get(f"/sessions/{session}").json()["title"] == "Cache questions"
    listed = {s["session_id"]: s for s in http.get("/sessions").json()["sessions"]}
    assert listed[session]["title"] == "Cache questions"
    assert http.patch(f"/sessions/{session}", json={"title": "   "}).json()["title"] == ""
    markup = http.patch(f"/sessions/{session}", json={"title": "<b>x</b>"}).json()["title"]
    assert markup == "<b>x</b>"  # stored as given: the page shows it as text


def test_rename_refuses_bad_bodies_and_unknown_sessions(http):
    session = new_session(http)
    # one PATCH changes whatever it names (title, preferences, deliberation level); {} changes nothing
    assert http.patch(f"/sessions/{session}", json={}).json()["title"] == ""
    for body, field in (
        ({"title": "x" * 201}, "title"),
        ({"title": 5}, "title"),
        ({"title": "a", "kb": "b"}, "kb"),
    ):
        reply = http.patch(f"/sessions/{session}", json=body)
        assert reply.status_code == 422 and reply.json()["details"]["field"] == field, body
    bad = http.patch(f"/sessions/{session}", content=b"{nope", headers={"Content-Type": "application/json"})
    assert bad.json()["code"] == "MALFORMED_JSON"
    missing = http.patch("/sessions/ses_missing", json={"title": "t"})
    assert missing.status_code == 404 and missing.json()["code"] == "SESSION_NOT_FOUND"


def test_a_kbs_sources_are_listed_in_ingest_order(http):
    ingest_example(http, "browse-docs")
    session = new_session(http, kb="browse-docs")
    http.post(
        f"/sessions/{session}/workspace/sources", json={"text": FACTS, "source_name": "zorblax.txt"}
    ).raise_for_status()
    listed = http.get("/kbs/browse-docs/sources").json()
    assert listed["kb"]["name"] == "browse-docs" and listed["kb"]["sources"] == 2
    assert [s["name"] for s in listed["sources"]] == [EXAMPLE.name, "zorblax.txt"]
    assert all(s["unit_count"] > 0 and s["bytes"] > 0 for s in listed["sources"])
    by_id = http.get(f"/kbs/{listed['kb']['id']}/sources").json()
    assert by_id == listed
    missing = http.get("/kbs/no-such-kb/sources")
    assert missing.status_code == 404 and missing.json()["code"] == "KB_NOT_FOUND"


def test_a_cited_unit_opens_with_its_text_and_place_even_after_the_kb_changes(http):
    ingest_example(http, "unit-docs")
    session = new_session(http, kb="unit-docs")
    turn = ask(http, session, "How do I clean a broken cache?")
    cited = turn["response_document"]["groups"][0]["kbSources"][0]
    unit = http.get(f"/sessions/{session}/units/{cited['id']}").json()
    assert unit["id"] == cited["id"] and unit["origin"] == "kb" and unit["kb_name"] == "unit-docs"
    assert unit["source_name"] == EXAMPLE.name
    assert unit["place"][0] == EXAMPLE.name and unit["place"][-1] == "Cleaning a broken cache"
    assert "Delete the `.tessel/cache` folder." in unit["text"]
    assert unit["unit"]["id"] == cited["id"] and unit["unit"]["role"]
    http.post("/kbs", json={"name": "unit-other"}).raise_for_status()
    http.post(f"/sessions/{session}/kb/load", json={"kb": "unit-other"}).raise_for_status()
    assert http.get(f"/sessions/{session}/units/{cited['id']}").json()["text"] == unit["text"]
    for bad in ("no-such-source::chunk-000::unit-000", cited["id"] + "9", "x"):
        missing = http.get(f"/sessions/{session}/units/{bad}")
        assert missing.status_code == 404 and missing.json()["code"] == "UNIT_NOT_FOUND", bad
    assert http.get(f"/sessions/ses_missing/units/{cited['id']}").json()["code"] == "SESSION_NOT_FOUND"


def test_a_session_unit_opens_from_the_session(http):
    session = new_session(http)
    loaded = http.post(
        f"/sessions/{session}/context", json={"text": FACTS, "source_name": "facts.txt"}
    ).json()
    unit_id = loaded["unit_ids"][0]
    unit = http.get(f"/sessions/{session}/units/{unit_id}").json()
    assert unit["origin"] == "session" and unit["kb_id"] is None
    assert "zorblax" in unit["text"].lower()
    other = new_session(http)  # another session does not see it
    assert http.get(f"/sessions/{other}/units/{unit_id}").status_code == 404


def test_plugins_carry_their_descriptor_and_planner_hints(http):
    plugins = {p["id"]: p for p in http.get("/plugins").json()["plugins"]}
    kb = plugins["kb-fast"]
    assert kb["plannerHints"]["preferredDepth"] and "expectedLatencyMs" in kb["plannerHints"]
    assert kb["timeoutMs"] > 0 and kb["maxInputSizeBytes"] > 0 and kb["concurrency"] >= 1
    assert "retrieve-context" in kb["provides"] and kb["accepts"]
    assert plugins["planner-default"]["plannerHints"] is None  # planners declare none


def test_every_answered_plugin_call_keeps_the_cnl_it_returned(http):
    session = new_session(http)
    http.post(f"/sessions/{session}/context", json={"text": FACTS}).raise_for_status()
    trace = ask(http, session, "Where does the zorblax live?")["execution_trace"]
    calls = [
        n for n in trace["nodes"] if n["kind"] == "plugin" and n.get("status") not in ("pending", "error")
    ]
    assert calls
    for node in calls:
        cnl = node["output"]["cnl"]
        assert cnl.startswith("## Plugin Result\nStatus: ") and f"Plugin: {node['pluginId']}" in cnl
        assert f"Status: {node['status']}" in cnl
    retrieve = next(n for n in calls if n["op"] == "retrieve")
    assert (
        "## Resolved Intent 1" in retrieve["output"]["cnl"]
        and "## Context Unit " in retrieve["output"]["cnl"]
    )
    stored = http.get(f"/sessions/{session}/explainability").json()["turns"][-1]["trace"]
    assert any(n.get("output", {}).get("cnl") for n in stored["nodes"])


def test_a_version_3_database_gains_session_titles_and_keeps_its_sessions(tmp_path):
    conn = sqlite3.connect(tmp_path / "mrpvm.db", isolation_level=None)
    for migration in store_rows.MIGRATIONS[:3]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    conn.execute(
        "INSERT INTO sessions (id, created_at, updated_at, turn_count) VALUES ('ses_1', 'a', 'b', 2)"
    )
    conn.close()
    store = Store.open(tmp_path)
    try:
        assert store.schema_version() == store_rows.SCHEMA_VERSION >= 4
        old = store.get_session("ses_1")
        assert old.title == "" and old.turnCount == 2
        assert store.set_session_title("ses_1", "Named").title == "Named"
        assert [s.title for s in store.list_sessions()] == ["Named"]
        assert store.source_by_id("nope") is None and store.kb_unit("kb_x", "u") is None
    finally:
        store.close()
