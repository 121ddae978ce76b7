"""The DS013 surface through a real daemon with raw HTTP: chat SSE, sessions, context, explainability, KBs."""

from __future__ import annotations

import json

from api_support import FACTS, ask, new_session, sse_events


def test_chat_stream_has_meta_progress_deltas_and_completed(http):
    session = new_session(http)
    http.post(f"/sessions/{session}/context", json={"text": FACTS}).raise_for_status()
    reply = http.post(
        "/chat/completions", json={"message": "Where does the zorblax live?", "session_id": session}
    )
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
    events = sse_events(reply.text)
    names = [name for name, _ in events]
    assert names[0] == "response.meta" and names[-1] == "response.completed"
    assert "error" not in names
    meta = json.loads(events[0][1])
    assert meta["session_id"] == session
    progress = [json.loads(data) for name, data in events if name == "progress"]
    starts = [p for p in progress if p["event"] == "plugin-start"]
    ends = [p for p in progress if p["event"] == "plugin-end"]
    assert starts and [p["node"] for p in starts] == sorted(
        {p["node"] for p in ends}, key=[p["node"] for p in starts].index
    )
    assert {p["pluginId"] for p in starts} >= {"sd-symbolic", "kb-fast", "gs-symbolic"}
    first_delta = names.index("response.delta")
    assert all(n == "progress" for n in names[1:first_delta])  # progress comes while the turn runs
    deltas = "".join(json.loads(d)["delta"] for n, d in events if n == "response.delta")
    done = json.loads(events[-1][1])
    assert deltas == done["response_markdown"] and "Norway" in deltas
    assert done["request_id"] == meta["request_id"]
    traced = {n["id"] for n in done["execution_trace"]["nodes"] if n["kind"] == "plugin"}
    assert {p["node"] for p in starts} <= traced


def test_session_keeps_its_context_across_turns_and_explains_them(http):
    session = new_session(http)
    loaded = http.post(
        f"/sessions/{session}/context", json={"text": FACTS, "source_name": "facts.txt"}
    ).json()
    assert loaded["added"] >= 1 and loaded["source_id"].startswith("facts")
    questions = [
        "What is the zorblax?",
        "Where does the zorblax live?",
        "What does the zorblax eat?",
    ]
    expected = ["teal", "Norway", "blue fish"]
    answers = [ask(http, session, q) for q in questions]
    for answer, word in zip(answers, expected, strict=True):
        assert answer["session_id"] == session and word in answer["response_markdown"]
    other = ask(http, new_session(http), "Where does the zorblax live?")  # a fresh session knows nothing
    assert "Norway" not in other["response_markdown"]

    info = http.get(f"/sessions/{session}").json()
    assert info["turn_count"] == 3 and info["unit_count"] >= loaded["added"]
    explained = http.get(f"/sessions/{session}/explainability").json()
    turns = explained["turns"]
    assert [t["turn_index"] for t in turns] == [0, 1, 2]
    assert [t["user_message"] for t in turns] == questions
    assert [t["request_id"] for t in turns] == [a["request_id"] for a in answers]
    for turn, word in zip(turns, expected, strict=True):
        assert word in turn["answer_preview"]
        assert turn["plugin_ids"]["gs"] == "gs-symbolic"
        assert turn["response_document"]["requestId"] == turn["request_id"]
        assert turn["trace"]["nodes"] and turn["trace"]["edges"]
        # recordOutcome runs on after the answer; explainability shows it finished
        (record,) = [n for n in turn["trace"]["nodes"] if n.get("op") == "recordOutcome"]
        assert record["status"] == "success" and record["output"]["result"]
    for answer, turn in zip(answers, turns, strict=True):  # the same nodes as the answers' traces
        assert [n["id"] for n in turn["trace"]["nodes"]] == [
            n["id"] for n in answer["execution_trace"]["nodes"]
        ]


def test_history_messages_become_context_of_a_fresh_session(http):
    body = {
        "messages": [
            {"role": "user", "content": "The quokka sleeps in hollow logs."},
            {"role": "user", "content": "Where does the quokka sleep?"},
        ],
        "stream": False,
    }
    reply = http.post("/chat/completions", json=body).json()
    assert "hollow logs" in reply["response_markdown"]
    turns = http.get(f"/sessions/{reply['session_id']}/explainability").json()["turns"]
    assert [t["user_message"] for t in turns] == ["Where does the quokka sleep?"]


def test_session_lifecycle(http):
    session = new_session(http, kb_plugin="kb-fast")
    info = http.get(f"/sessions/{session}").json()
    assert info["preferences"] == {"kb": "kb-fast"} and info["turn_count"] == 0
    assert session in [s["session_id"] for s in http.get("/sessions").json()["sessions"]]
    assert http.delete(f"/sessions/{session}").json() == {"deleted": session}
    gone = http.get(f"/sessions/{session}")
    assert gone.status_code == 404 and gone.json()["code"] == "SESSION_NOT_FOUND"
    assert gone.json()["sessionId"] == session


def test_kbs_workspace_save_load_and_fork(http):
    session = new_session(http)
    added = http.post(
        f"/sessions/{session}/workspace/sources",
        json={
            "text": "The glimmerfin swims in cold lakes.\n\nThe glimmerfin has silver scales.",
            "source_name": "fish.md",
        },
    )
    assert added.status_code == 200, added.text
    work = added.json()
    workspace = work["kb"]
    assert workspace["name"] == f"workspace-{session}" and workspace["units"] >= 1
    assert work["session"]["kb_id"] == workspace["id"] and work["sources"][0]["name"] == "fish.md"
    answer = ask(http, session, "Where does the glimmerfin swim?")
    assert "cold lakes" in answer["response_markdown"]

    created = http.post("/kbs", json={"name": "zoo"})
    assert created.status_code == 201 and created.json()["units"] == 0
    assert http.post("/kbs", json={"name": "zoo"}).json()["code"] == "KB_EXISTS"

    # save: the session's committed units become one source of a KB
    http.post(f"/sessions/{session}/context", json={"text": FACTS}).raise_for_status()
    saved = http.post(f"/sessions/{session}/kb/save", json={"kb": "zoo", "source_name": "notes"}).json()
    assert saved["kb"]["name"] == "zoo" and saved["sources"][0]["name"] == "notes"
    assert saved["kb"]["units"] == saved["sources"][0]["unit_count"] >= 1

    # load: a fresh session mounting zoo answers from it
    reader = new_session(http)
    mounted = http.post(f"/sessions/{reader}/kb/load", json={"kb": "zoo"}).json()
    assert mounted["session"]["kb_name"] == "zoo"
    assert "Norway" in ask(http, reader, "Where does the zorblax live?")["response_markdown"]

    # fork: a copy under a new name, mounted; the original is unchanged by later writes to the copy
    forked = http.post(f"/sessions/{reader}/kb/fork", json={"name": "zoo-copy"}).json()
    assert forked["kb"]["name"] == "zoo-copy" and forked["session"]["kb_name"] == "zoo-copy"
    assert forked["kb"]["units"] == saved["kb"]["units"]
    assert "Norway" in ask(http, reader, "Where does the zorblax live?")["response_markdown"]
    http.post(
        f"/sessions/{reader}/workspace/sources",
        json={"text": "The copy has a red lantern.", "source_name": "extra"},
    ).raise_for_status()
    kbs = {kb["name"]: kb for kb in http.get("/kbs").json()["kbs"]}
    assert kbs["zoo-copy"]["sources"] == kbs["zoo"]["sources"] + 1
    assert kbs["zoo"]["units"] == saved["kb"]["units"]

    missing = http.post(f"/sessions/{reader}/kb/load", json={"kb": "nope"})
    assert missing.status_code == 404 and missing.json()["code"] == "KB_NOT_FOUND"


def test_plugins_settings_health_ready(http):
    plugins = http.get("/plugins").json()["plugins"]
    by_id = {p["id"]: p for p in plugins}
    assert by_id["gs-symbolic"]["enabled"] and not by_id["gs-llm-fast"]["enabled"]
    kbs = http.get("/plugins", params={"type": "kb-plugin"}).json()["plugins"]
    assert kbs and {p["type"] for p in kbs} == {"kb-plugin"}
    bad = http.get("/plugins", params={"type": "nonsense"})
    assert bad.status_code == 400 and bad.json()["details"]["field"] == "type"

    roles = http.get("/settings/llm-roles").json()
    assert "goal-fast" in roles["roles"]
    changed = http.put(
        "/settings/llm-roles", json={"roles": {"goal-fast": "model-x"}, "plugins": {"gs-llm-fast": "model-y"}}
    )
    assert changed.status_code == 200, changed.text
    assert http.get("/settings/llm-roles").json()["roles"]["goal-fast"] == "model-x"
    assert http.get("/settings/llm-roles").json()["plugins"]["gs-llm-fast"] == "model-y"
    http.put("/settings/llm-roles", json={"roles": {"goal-fast": ""}}).raise_for_status()
    assert http.get("/settings/llm-roles").json()["roles"]["goal-fast"] != "model-x"
    unknown = http.put("/settings/llm-roles", json={"roles": {"chef": "m"}})
    assert unknown.status_code == 400 and unknown.json()["code"] == "UNKNOWN_ROLE"

    assert http.get("/health").json()["status"] == "ok"
    ready = http.get("/ready")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["registry"]["gs-plugin"] >= 1 and ready.json()["store"]["ok"]


def test_openapi_documents_exactly_the_routes(http):
    from mrpvm.shells.api import create_app

    doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    documented = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    app = create_app()
    template = __import__("re").compile(r"{([^}:]+):[^}]+}")  # `{path:path}` is documented as `{path}`
    routed = {(template.sub(r"{\1}", r.path), m) for r in app.routes for m in r.methods if m != "HEAD"}
    assert documented == routed
    chat = doc["paths"]["/v1/chat/completions"]["post"]
    ref = chat["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert "messages" in body["required"] and "session_id" in body["properties"]
    for path, ops in doc["paths"].items():  # every path parameter is declared
        for op in ops.values():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == set(__import__("re").findall(r"{([^}]+)}", path))


def test_chat_sources_load_into_a_new_session_in_the_same_request(http):
    """`sources` (what `mrpvm ask --source` sends a daemon): the texts are loaded into a fresh session as
    POST /sessions/{id}/context loads them, then the turn runs there; one request instead of three."""
    message = "Where does the zorblax live?"
    sources = [{"source_name": "facts.md", "text": FACTS}]
    done = http.post("/chat/completions", json={"message": message, "stream": False, "sources": sources})
    assert done.status_code == 200, done.text
    turn = done.json()
    assert "Norway" in turn["answer_markdown"] and turn["context_warnings"] == []
    assert "facts.md" in turn["response_markdown"]  # the source's own name, as the context route names it
    info = http.get(f"/sessions/{turn['session_id']}").json()
    assert info["unit_count"] >= 1 and info["turn_count"] == 1
    # into a session that exists: its units are the ones the turn reads
    session = new_session(http)
    again = http.post(
        "/chat/completions",
        json={"message": message, "stream": False, "session_id": session, "sources": sources},
    ).json()
    assert again["session_id"] == session and "Norway" in again["answer_markdown"]
    plain = http.post("/chat/completions", json={"message": message, "stream": False}).json()
    assert plain["context_warnings"] is None  # no sources given


def test_chat_sources_refused_with_messages_an_unknown_session_or_a_bad_pin(http):
    sources = [{"source_name": "facts.md", "text": FACTS}]
    with_messages = http.post(
        "/chat/completions",
        json={"messages": [{"role": "user", "content": "Why?"}], "stream": False, "sources": sources},
    )
    assert with_messages.status_code == 422 and with_messages.json()["code"] == "VALIDATION_ERROR"
    unknown = http.post(
        "/chat/completions",
        json={"message": "Why?", "stream": False, "session_id": "ses_nope", "sources": sources},
    )
    assert unknown.status_code == 404
    before = len(http.get("/sessions").json()["sessions"])
    bad_pin = http.post(
        "/chat/completions",
        json={"message": "Why?", "stream": False, "kb_plugin": "kb-nope", "sources": sources},
    )
    assert bad_pin.status_code == 400 and bad_pin.json()["code"] == "UNKNOWN_PLUGIN"
    assert len(http.get("/sessions").json()["sessions"]) == before  # refused before any session work
