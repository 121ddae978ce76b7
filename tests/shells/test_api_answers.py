"""Through a real daemon: the OpenAI `content` is the answer, legacy fields, deliberation_level, upstream
aliases and routes (kb/mount, workspace), session preferences."""

from __future__ import annotations

import openai
import pytest
from api_support import Daemon, sse_events

ENABLED = "sd-symbolic,planner-default,kb-fast,kb-thinkingdb,gs-symbolic"
BIRDS = "# Birds\n\nThe zorblax is a teal bird.\n\nThe zorblax lives in Norway.\n"
FISH = "# Fish\n\nThe quibble fish swims in Lake Garda.\n\nThe quibble fish eats green algae.\n"
INTERNALS = (
    "**Act:**",
    "**Status:**",
    "**Intent:**",
    "## 1.",
    "Session Context",
    "KB Context",
    "Sources Used",
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    with Daemon(tmp_path_factory.mktemp("answers"), env={"MRPVM_ENABLED_PLUGINS": ENABLED}) as d:
        yield d


@pytest.fixture(scope="module")
def kb_session(daemon):
    """A session whose workspace KB holds birds.md and fish.md (sent with upstream's field names)."""
    with daemon.client() as c:
        session = c.post("/sessions", json={}).json()["session_id"]
        for name, text in (("birds.md", BIRDS), ("fish.md", FISH)):
            r = c.post(f"/sessions/{session}/workspace/sources", json={"content": text, "name": name})
            assert r.status_code == 200, r.text
        return session, r.json()["kb"]["id"]


def client(daemon):
    return openai.OpenAI(base_url=daemon.url + "/v1", api_key="unused", max_retries=0)


def test_openai_content_is_the_answer_non_stream(daemon, kb_session):
    session, _ = kb_session
    with client(daemon) as c:
        done = c.chat.completions.create(
            model="mrp-vm",
            messages=[{"role": "user", "content": "Where does the zorblax live?"}],
            extra_body={"session_id": session},
        )
    content = done.choices[0].message.content
    assert "Norway" in content
    assert not [marker for marker in INTERNALS if marker in content], content
    assert "Sources:\n- " in content and "- birds.md › Birds" in content
    assert not content.lstrip().startswith("#")  # one intent: no heading
    extra = done.model_extra
    assert extra["response_document"]["groups"][0]["answerMarkdown"] in content
    assert extra["execution_trace"]["nodes"] and extra["request_id"].startswith("req_")


def test_openai_content_is_the_answer_stream(daemon, kb_session):
    session, _ = kb_session
    with client(daemon) as c:
        stream = c.chat.completions.create(
            model="mrp-vm",
            messages=[{"role": "user", "content": "What does the quibble fish eat?"}],
            extra_body={"session_id": session},
            stream=True,
        )
        chunks = list(stream)
    content = "".join(ch.choices[0].delta.content or "" for ch in chunks)
    assert "algae" in content and "fish.md" in content
    assert not [marker for marker in INTERNALS if marker in content], content
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["response_document"]["groups"]  # the document stays in the extra fields


def test_several_intents_get_a_short_heading_each(daemon, kb_session):
    session, _ = kb_session
    with daemon.client() as c:
        r = c.post(
            "/v1/chat/completions",
            json={
                "messages": [
                    {
                        "role": "user",
                        "content": "Where does the zorblax live? What does the quibble fish eat?",
                    }
                ],
                "session_id": session,
            },
        )
    body = r.json()
    content = body["choices"][0]["message"]["content"]
    groups = body["response_document"]["groups"]
    assert len(groups) == 2
    assert content.count("### ") == 2 and "Norway" in content and "algae" in content
    # the DS013 route keeps the full document and adds the answer-only text
    with daemon.client() as c:
        full = c.post(
            "/chat/completions",
            json={"message": "Where does the zorblax live?", "session_id": session, "stream": False},
        ).json()
    assert "**Act:**" in full["response_markdown"] and "**Act:**" not in full["answer_markdown"]


def test_a_weak_answer_says_so_and_no_context_reads_the_sentence(daemon, kb_session):
    session, _ = kb_session
    with daemon.client() as c:
        r = c.post(
            "/v1/chat/completions",
            json={
                "messages": [{"role": "user", "content": "What is the capital of Peru?"}],
                "session_id": session,
            },
        )
    content = r.json()["choices"][0]["message"]["content"]
    assert "do not contain enough evidence" in content
    assert "**Warning:**" not in content and "evidence judged insufficient" not in content


# --------------------------------------------------------------------------- legacy fields


def _retrieves(body: dict) -> set[str]:
    return {
        n["pluginId"]
        for n in body["execution_trace"]["nodes"]
        if n["kind"] == "plugin" and n.get("op") == "retrieve"
    }


def test_retrieval_profile_thinkingdb_is_served_by_kb_thinkingdb(daemon, kb_session):
    session, _ = kb_session
    with client(daemon) as c:
        done = c.chat.completions.create(
            model="mrp-vm",
            messages=[{"role": "user", "content": "Where does the zorblax live?"}],
            extra_body={
                "session_id": session,
                "retrieval_profile": "thinkingdb",
                "processing_mode": "symbolic-only",
            },
        )
    extra = done.model_extra
    assert extra["kb_plugin"] == "kb-thinkingdb" and _retrieves(extra) == {"kb-thinkingdb"}
    assert extra["retrieval_profile"] == "thinkingdb" and extra["processing_mode"] == "symbolic-only"
    assert "Norway" in done.choices[0].message.content
    with daemon.client() as c:
        fast = c.post(
            "/chat/completions",
            json={
                "message": "Where does the zorblax live?",
                "session_id": session,
                "stream": False,
                "retrieval_profile": "fast",
            },
        ).json()
        session_row = c.get(f"/sessions/{session}").json()
    assert (
        fast["kb_plugin"] == "kb-fast"
        and _retrieves(fast) == {"kb-fast"}
        and fast["retrieval_profile"] == "fast"
    )
    # never stored on the session: its preferences are plugin ids (a successful turn records the plugins
    # that served); the legacy name is derived from them
    assert set(session_row["preferences"]) <= {"planner", "sd", "kb", "gs", "val"}
    assert session_row["retrieval_profile"] == {"kb-fast": "fast", "kb-thinkingdb": "thinkingdb"}.get(
        session_row["preferences"].get("kb")
    )


def test_an_explicit_plugin_field_wins_over_the_legacy_name(daemon, kb_session):
    session, _ = kb_session
    with daemon.client() as c:
        body = c.post(
            "/chat/completions",
            json={
                "message": "Where does the zorblax live?",
                "session_id": session,
                "stream": False,
                "retrieval_profile": "thinkingdb",
                "kb_plugin": "kb-fast",
            },
        ).json()
    assert _retrieves(body) == {"kb-fast"}


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("retrieval_profile", "wide-recall", ["fast", "balanced", "thinkingdb"]),
        ("processing_mode", "magic", ["symbolic-only", "llm-assisted"]),
    ],
)
def test_an_unknown_legacy_value_is_a_400_with_the_allowed_values(daemon, field, value, allowed):
    with daemon.client() as c:
        r = c.post("/chat/completions", json={"message": "hi", "stream": False, field: value})
        v1 = c.post(
            "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}], field: value}
        )
    assert r.status_code == 400 and v1.status_code == 400
    body = r.json()
    assert body["code"] == "UNKNOWN_LEGACY_VALUE" and body["details"] == {
        "field": field,
        "value": value,
        "allowed": allowed,
    }
    assert v1.json()["error"]["code"] == "UNKNOWN_LEGACY_VALUE"
    with client(daemon) as c, pytest.raises(openai.BadRequestError):
        c.chat.completions.create(
            model="mrp-vm", messages=[{"role": "user", "content": "hi"}], extra_body={field: value}
        )


def test_legacy_names_on_a_new_session_become_preferences(daemon):
    with daemon.client() as c:
        r = c.post("/sessions", json={"retrieval_profile": "thinkingdb", "deliberation_level": 1})
    info = r.json()
    assert r.status_code == 201
    assert info["preferences"] == {"kb": "kb-thinkingdb"} and info["retrieval_profile"] == "thinkingdb"
    assert info["deliberation_level"] == 1


# --------------------------------------------------------------------------- deliberation over HTTP


def test_deliberation_level_over_http(daemon, kb_session):
    session, _ = kb_session
    with daemon.client() as c:
        body = c.post(
            "/chat/completions",
            json={
                "message": "Where does the zorblax live?",
                "session_id": session,
                "stream": False,
                "deliberation_level": 2,
            },
        ).json()
        bad = c.post("/chat/completions", json={"message": "hi", "stream": False, "deliberation_level": 4})
    assert body["deliberation_level"] == 2
    nodes = body["execution_trace"]["nodes"]
    assert [n for n in nodes if n["kind"] == "candidate"]
    assert [e for e in body["execution_trace"]["edges"] if e["kind"] == "chooses" and e["reason"]]
    assert bad.status_code == 422 and bad.json()["details"]["field"] == "deliberation_level"


def test_a_session_preference_sets_the_level_and_patch_changes_it(daemon, kb_session):
    _, kb_id = kb_session
    with daemon.client() as c:
        session = c.post("/sessions", json={"kb": kb_id}).json()["session_id"]
        patched = c.patch(f"/sessions/{session}", json={"deliberation_level": 2, "retrieval_profile": "fast"})
        body = c.post(
            "/chat/completions",
            json={"message": "Where does the zorblax live?", "session_id": session, "stream": False},
        ).json()
        cleared = c.patch(f"/sessions/{session}", json={"kb_plugin": ""}).json()
        unknown = c.patch(f"/sessions/{session}", json={"colour": "red"})
    assert patched.status_code == 200
    assert patched.json()["deliberation_level"] == 2 and patched.json()["preferences"] == {"kb": "kb-fast"}
    assert body["deliberation_level"] == 2 and body["kb_plugin"] == "kb-fast"
    assert "kb" not in cleared["preferences"] and cleared["deliberation_level"] == 2
    assert unknown.status_code == 422


# --------------------------------------------------------------------------- upstream parity


def test_upstream_aliases_and_routes(daemon, kb_session):
    _, kb_id = kb_session
    with daemon.client() as c:
        session = c.post("/sessions", json={}).json()["session_id"]
        mounted = c.post(f"/sessions/{session}/kb/mount", json={"kbId": kb_id})
        loaded = c.post(
            f"/sessions/{session}/context", json={"content": "The wibble is orange.", "name": "notes"}
        )
        workspace = c.get(f"/sessions/{session}/workspace").json()
        both = c.post(f"/sessions/{session}/context", json={"text": "a", "content": "b"})
        neither = c.post(f"/sessions/{session}/context", json={"name": "x"})
        empty = c.post(f"/sessions/{session}/context", json={"content": "  "})
        no_kb = c.post(f"/sessions/{session}/kb/mount", json={})
    assert mounted.status_code == 200 and mounted.json()["kb"]["id"] == kb_id
    assert loaded.status_code == 200 and loaded.json()["added"] >= 1
    assert workspace["session"]["session_id"] == session and workspace["kb"]["id"] == kb_id
    assert sorted(s["name"] for s in workspace["sources"]) == ["birds.md", "fish.md"]
    assert workspace["session_units"] == loaded.json()["added"]
    assert both.status_code == 422 and both.json()["details"]["field"] == "content"
    assert neither.status_code == 422 and neither.json()["details"]["field"] == "text"
    assert empty.status_code == 422 and no_kb.status_code == 422


def test_every_route_is_documented_in_api_md(daemon):
    from mrpvm.kernel.config import PROJECT_ROOT

    text = (PROJECT_ROOT / "shells" / "api" / "API.md").read_text(encoding="utf-8")
    with daemon.client() as c:
        paths = c.get("/openapi.json").json()["paths"]
    missing = [
        f"{method.upper()} {path}"
        for path, ops in paths.items()
        for method in ops
        if f"{method.upper()} {path}" not in text
    ]
    assert not missing, f"API.md lacks: {missing}"


def test_ds013_stream_carries_the_answer_in_the_completed_event(daemon, kb_session):
    session, _ = kb_session
    with daemon.client() as c:
        r = c.post(
            "/chat/completions", json={"message": "Where does the zorblax live?", "session_id": session}
        )
    events = dict((name, data) for name, data in sse_events(r.text))
    import json

    done = json.loads(events["response.completed"])
    assert "Norway" in done["answer_markdown"] and "**Act:**" not in done["answer_markdown"]
