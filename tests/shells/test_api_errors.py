"""Bad input gets a structured error with the right status, and the daemon keeps serving afterwards."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest
from api_support import Daemon, alive

ERROR_KEYS = {"code", "message", "requestId", "sessionId", "timestamp", "details"}
JSON = {"Content-Type": "application/json"}


def check(reply: httpx.Response, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert set(body) >= ERROR_KEYS and body["code"] == code, body
    assert body["requestId"] == reply.headers["x-request-id"] and body["timestamp"].endswith("Z")
    assert "Traceback" not in reply.text
    return body


def still_serving(http) -> None:
    reply = http.post("/chat/completions", json={"message": "Is anyone there?", "stream": False})
    assert reply.status_code == 200 and reply.json()["response_markdown"]


def test_malformed_json_is_400(http):
    for path in ("/chat/completions", "/v1/chat/completions", "/sessions", "/kbs"):
        body = check(http.post(path, content=b'{"message": "hi",', headers=JSON), 400, "MALFORMED_JSON")
        assert "JSON" in body["message"]
    check(http.post("/kbs", content=b""), 400, "EMPTY_BODY")
    still_serving(http)


def test_invalid_utf8_inside_json_is_400(http):
    for path in ("/chat/completions", "/v1/chat/completions", "/sessions", "/kbs"):
        for raw in (b'{"name": "a\xff\xfeb"}', b'{"message": "\xc3"}', b'{"kb": "\xed\xa0\x80"}'):
            body = check(http.post(path, content=raw, headers=JSON), 400, "MALFORMED_JSON")
            assert "UTF-8" in body["message"] or "JSON" in body["message"]
    still_serving(http)


def test_wrong_types_are_422_naming_the_field(http):
    cases = [
        ("/chat/completions", {"message": 5}, "message"),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ("/v1/chat/completions", {"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ("/v1/chat/completions", {"model": "mrp-vm"}, "messages"),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "x"}], "max_llm_calls": -1},
            "max_llm_calls",
        ),
        ("/sessions", {"kb": ["a"]}, "kb"),
        ("/kbs", {"name": ""}, "name"),
        ("/settings/llm-roles", {"roles": {"planner": 3}}, "roles"),
    ]
    for path, payload, field in cases:
        method = http.put if path.startswith("/settings") else http.post
        body = check(method(path, json=payload), 422, "VALIDATION_ERROR")
        assert body["details"]["field"] == field and field in body["message"]
    both = check(
        http.post("/chat/completions", json={"message": "a", "messages": []}), 422, "VALIDATION_ERROR"
    )
    assert both["details"]["field"] == "message"
    still_serving(http)


def test_body_over_the_limit_is_413(http, daemon):
    big = {"message": "x" * (1 << 20)}  # 1 MiB of text: over the default 1 MiB limit once wrapped in JSON
    body = check(http.post("/chat/completions", json=big), 413, "BODY_TOO_LARGE")
    assert body["details"]["limitBytes"] == 1 << 20

    def chunked():  # no Content-Length: the streamed size is counted
        yield b'{"message": "'
        for _ in range(20):
            yield b"y" * 65536
        yield b'"}'

    with daemon.client() as fresh:
        check(fresh.post("/chat/completions", content=chunked(), headers=JSON), 413, "BODY_TOO_LARGE")
    still_serving(http)


def test_unknown_session_is_404_everywhere(http):
    missing = "ses_0000000000000000"
    requests = [
        http.get(f"/sessions/{missing}"),
        http.delete(f"/sessions/{missing}"),
        http.get(f"/sessions/{missing}/explainability"),
        http.post(f"/sessions/{missing}/context", json={"text": "x"}),
        http.post(f"/sessions/{missing}/kb/load", json={"kb": "x"}),
        http.post(f"/sessions/{missing}/workspace/sources", json={"text": "x", "source_name": "s"}),
        http.post("/chat/completions", json={"message": "hi", "session_id": missing}),
    ]
    for reply in requests:
        assert check(reply, 404, "SESSION_NOT_FOUND")["sessionId"] == missing
    still_serving(http)


def test_unknown_plugin_is_400(http):
    body = check(
        http.post("/chat/completions", json={"message": "hi", "kb_plugin": "kb-nope"}), 400, "UNKNOWN_PLUGIN"
    )
    assert body["details"] == {"field": "kb_plugin", "plugin": "kb-nope"}
    wrong_type = check(
        http.post("/chat/completions", json={"message": "hi", "goal_solver_plugin": "kb-fast"}),
        400,
        "UNKNOWN_PLUGIN",
    )
    assert wrong_type["details"]["field"] == "goal_solver_plugin"
    session = http.post("/sessions").json()["session_id"]
    check(
        http.post(f"/sessions/{session}/context", json={"text": "x", "seed_detector_plugin": "sd-nope"}),
        400,
        "UNKNOWN_PLUGIN",
    )
    check(http.post("/sessions", json={"planner_plugin": "nope"}), 400, "UNKNOWN_PLUGIN")
    still_serving(http)


def test_unknown_route_and_method_are_structured(http):
    check(http.get("/no/such/route"), 404, "NOT_FOUND")
    check(http.delete("/kbs"), 405, "METHOD_NOT_ALLOWED")
    still_serving(http)


def test_deadline_exhaustion_is_reported_in_the_response_document(tmp_path):
    with Daemon(tmp_path / "home", env={"MRPVM_REQUEST_TIMEOUT_MS": "1"}) as daemon, daemon.client() as http:
        reply = http.post("/chat/completions", json={"message": "What is the zorblax?", "stream": False})
        assert reply.status_code == 200
        done = reply.json()
        assert done["status"] == "failed" and done["response_document"]["status"] == "failed"
        skipped = [n for n in done["execution_trace"]["nodes"] if n.get("status") == "skipped-budget"]
        assert skipped and all("deadline" in n["output"]["reason"] for n in skipped)


def test_token_is_required_when_set(tmp_path):
    with Daemon(tmp_path / "home", token="s3cret") as daemon:
        assert httpx.get(daemon.url + "/health").status_code == 200  # liveness stays open
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
            reply = httpx.get(daemon.url + "/ready", headers=headers)
            check(reply, 401, "UNAUTHORIZED")
            assert reply.headers["www-authenticate"] == "Bearer"
        check(httpx.post(daemon.url + "/v1/chat/completions", json={}), 401, "UNAUTHORIZED")
        with (
            openai.OpenAI(base_url=daemon.url + "/v1", api_key="wrong", max_retries=0) as bad,
            pytest.raises(openai.AuthenticationError),
        ):
            bad.models.list()
        with openai.OpenAI(base_url=daemon.url + "/v1", api_key="s3cret", max_retries=0) as good:
            reply = good.chat.completions.create(
                model="mrp-vm", messages=[{"role": "user", "content": "Hello?"}]
            )
            assert reply.choices[0].message.content
        with daemon.client() as http:
            assert http.get("/ready").status_code == 200
            assert json.loads(http.get("/openapi.json").content)["security"] == [{"bearer": []}]


def test_sigterm_stops_the_daemon_and_its_workers(tmp_path):
    daemon = Daemon(tmp_path / "home").start()
    try:
        with daemon.client() as http:
            assert (
                http.post("/chat/completions", json={"message": "Hello?", "stream": False}).status_code == 200
            )
        workers = daemon.children()
        assert workers  # warm plugin workers
    finally:
        code = daemon.stop()
    assert code in (0, -signal.SIGTERM)
    deadline = time.monotonic() + 10
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in workers)
    assert not any("Traceback" in line for line in daemon.log)


def test_serve_reports_a_busy_port_in_one_line(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = Daemon(tmp_path / "home").env
        done = subprocess.run(
            [sys.executable, "-m", "mrpvm.shells.cli.main", "serve", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"mrpvm: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
