"""The OpenAI-compatible surface through a real daemon, driven by the official `openai` client."""

from __future__ import annotations

import httpx
import openai
import pytest
from api_support import FACTS


@pytest.fixture(scope="module")
def client(daemon):
    with openai.OpenAI(base_url=daemon.url + "/v1", api_key="unused", max_retries=0) as c:
        yield c


def history(question: str) -> list[dict]:
    return [
        {"role": "system", "content": FACTS},
        {"role": "user", "content": question},
    ]


def test_non_stream_answers_from_the_message_history(client):
    reply = client.chat.completions.create(model="mrp-vm", messages=history("Where does the zorblax live?"))
    assert reply.object == "chat.completion"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.role == "assistant"
    content = reply.choices[0].message.content
    assert "Norway" in content
    extra = reply.model_extra
    assert extra["request_id"].startswith("req_") and reply.id == f"chatcmpl-{extra['request_id']}"
    assert extra["session_id"].startswith("ses_")
    assert extra["seed_detector_plugin"] == "sd-symbolic" and extra["goal_solver_plugin"] == "gs-symbolic"
    assert extra["response_document"]["requestId"] == extra["request_id"]
    assert extra["execution_trace"]["requestId"] == extra["request_id"]
    assert any(n["kind"] == "plugin" for n in extra["execution_trace"]["nodes"])
    assert reply.usage.total_tokens == 0


def test_stream_chunks_join_to_the_answer_and_end_with_done(client, daemon):
    stream = client.chat.completions.create(
        model="mrp-vm", messages=history("What is the zorblax?"), stream=True
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "teal" in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    extra = last.model_extra
    assert extra["response_document"]["requestId"] == extra["request_id"]
    assert len({c.id for c in chunks}) == 1
    # the streamed Markdown is exactly the stored turn's response
    with daemon.client() as http:
        turns = http.get(f"/sessions/{extra['session_id']}/explainability").json()["turns"]
    assert len(turns) == 1 and turns[0]["request_id"] == extra["request_id"]
    raw = httpx.post(
        daemon.url + "/v1/chat/completions",
        json={"model": "mrp-vm", "stream": True, "messages": history("What is the zorblax?")},
        timeout=30,
    )
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.text.rstrip().endswith("data: [DONE]")


def test_session_id_continues_a_session_and_echoes_pins(client, daemon):
    with daemon.client() as http:
        session = http.post("/sessions", json={}).json()["session_id"]
        assert http.post(f"/sessions/{session}/context", json={"text": FACTS}).status_code == 200
    first = client.chat.completions.create(
        model="mrp-vm:kb-fast,gs-symbolic",
        messages=[{"role": "user", "content": "What is the zorblax?"}],
        extra_body={"session_id": session},
    )
    second = client.chat.completions.create(
        model="mrp-vm",
        messages=[{"role": "user", "content": "Where does the zorblax live?"}],
        extra_body={"session_id": session, "planner_plugin": "planner-default"},
    )
    assert "teal" in first.choices[0].message.content
    assert "Norway" in second.choices[0].message.content
    assert first.model_extra["session_id"] == second.model_extra["session_id"] == session
    assert first.model_extra["kb_plugin"] == "kb-fast"
    assert second.model_extra["planner_plugin"] == "planner-default"


def test_models_lists_mrp_vm_and_pins(client):
    ids = [m.id for m in client.models.list()]
    assert ids[0] == "mrp-vm"
    assert "mrp-vm:kb-fast" in ids and "mrp-vm:gs-symbolic" in ids
    assert "mrp-vm:kb-balanced" not in ids  # not enabled in this daemon


def test_errors_reach_the_client_as_structured_errors(client):
    with pytest.raises(openai.BadRequestError) as bad_model:
        client.chat.completions.create(model="gpt-4o", messages=history("Hi?"))
    assert bad_model.value.body["code"] == "UNKNOWN_MODEL"
    with pytest.raises(openai.BadRequestError) as bad_pin:
        client.chat.completions.create(model="mrp-vm:no-such-plugin", messages=history("Hi?"))
    assert bad_pin.value.body["code"] == "UNKNOWN_PLUGIN"
    assert "no-such-plugin" in bad_pin.value.message
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(
            model="mrp-vm", messages=history("Hi?"), extra_body={"session_id": "ses_missing"}
        )
    assert missing.value.body["code"] == "SESSION_NOT_FOUND"  # the client reads OpenAI's `error` object
    full = missing.value.response.json()  # ...next to the daemon's structured error
    assert full["code"] == "SESSION_NOT_FOUND" and full["sessionId"] == "ses_missing"
    assert full["requestId"] and full["timestamp"]
    with pytest.raises(openai.UnprocessableEntityError) as no_user:
        client.chat.completions.create(model="mrp-vm", messages=[{"role": "system", "content": "x"}])
    assert no_user.value.body["param"] == "messages"
    assert no_user.value.response.json()["details"]["field"] == "messages"
    # still serving
    ok = client.chat.completions.create(model="mrp-vm", messages=history("What is the zorblax?"))
    assert "teal" in ok.choices[0].message.content
