"""The daemon around slow turns (uvicorn in a thread over the scripted test plugins): graceful shutdown,
a failure after the stream started, a client that leaves mid-turn, an unexpected error."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from pathlib import Path

import anyio
import httpx
import openai
import pytest
import uvicorn
from api_support import alive, sse_events
from engine_support import Harness, intent, unit
from mrpvm.kernel.store import Store
from mrpvm.shells.api import ApiSettings, create_app

SLOW_MS = 1200
ALPHA = [unit("session::t::unit-000", "Alpha is a widget")]
SCRIPT = {
    "planner-a": {"buildPlan": {"plan": {"kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}}},
    "sd-a": {
        "detectSeeds": [
            {"when": {"promptContains": "slow"}, "intents": [intent("slow alpha")], "units": ALPHA},
            {"intents": [intent("what is alpha")], "units": ALPHA},
        ]
    },
    "kb-a": {"retrieve": {"select": "all"}},
    "gs-a": {
        "solve": [
            {
                "when": {"promptContains": "slow"},
                "answer": "Alpha is a widget, slowly.",
                "sources": "evidence",
                "sleepMs": SLOW_MS,
            },
            {"answer": "Alpha is a widget.", "sources": "evidence"},
        ]
    },
    "val-a": {"validate": {"status": "accepted"}},
}


class ThreadServer:
    """uvicorn serving create_app(ctx, owns_context=True) on 127.0.0.1:<ephemeral> in a background thread."""

    def __init__(self, harness: Harness):
        self.harness = harness
        self.started = threading.Event()
        self.server: uvicorn.Server | None = None
        self.ctx = None
        self.url = ""
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self.ctx = await self.harness.open()
        # graceful-shutdown bounds far above a cold turn on a busy machine: the tests check order and outcome
        app = create_app(self.ctx, ApiSettings(shutdown_timeout_s=60), owns_context=True)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=60)
        self.server = uvicorn.Server(config)
        task = asyncio.create_task(self.server.serve(sockets=[sock]))
        while not self.server.started and not task.done():
            await asyncio.sleep(0.01)
        self.started.set()
        await task

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        assert self.started.wait(120) and self.server.started
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(120)
        assert not self.thread.is_alive()

    def __exit__(self, *exc: object) -> None:
        if self.thread.is_alive():
            self.stop()


def worker_pids() -> list[int]:
    me = os.getpid()
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmd = (entry / "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
            if ppid == me and b"scripted.py" in cmd:
                out.append(int(entry.name))
    return out


GS_STARTED = '"event":"plugin-start"'  # with the pluginId: the goal solver's call was sent, its worker runs


def stream_until(url: str, body: dict, lines: list[str], reached: threading.Event, *marks: str) -> None:
    """Read the whole SSE stream into `lines`; set `reached` at the first line holding every mark."""
    with httpx.stream("POST", url + "/chat/completions", json=body, timeout=120) as reply:
        for line in reply.iter_lines():
            lines.append(line)
            if all(mark in line for mark in marks):
                reached.set()


def stream_until_meta(url: str, body: dict, lines: list[str], meta: threading.Event) -> None:
    stream_until(url, body, lines, meta, "event: response.meta")


@pytest.fixture
def harness(tmp_path):
    return Harness(tmp_path, SCRIPT)


def test_shutdown_lets_the_running_turn_finish_then_stops_the_workers(harness):
    with ThreadServer(harness) as server:
        lines: list[str] = []
        solving = threading.Event()  # not the meta event: workers start lazily, after it
        body = {"message": "slow: what is alpha?"}
        client = threading.Thread(
            target=stream_until, args=(server.url, body, lines, solving, GS_STARTED, '"pluginId":"gs-a"')
        )
        client.start()
        assert solving.wait(120)  # every plugin starts cold here: slow when busy
        workers = worker_pids()
        assert workers
        server.stop()  # while the slow goal solver is still working
        client.join(120)
        assert not client.is_alive()
    events = sse_events("\n".join(lines) + "\n\n")
    assert [n for n, _ in events][-1] == "response.completed"
    done = json.loads(events[-1][1])
    assert "slowly" in done["response_markdown"]
    store = Store.open(harness.home)
    try:
        assert store.get_turn(done["request_id"]).status == "success"
    finally:
        store.close()
    deadline = time.monotonic() + 60
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in workers)


def test_a_failure_after_the_stream_started_is_an_error_event(harness):
    with ThreadServer(harness) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        session = http.post("/sessions").json()["session_id"]
        lines: list[str] = []
        meta = threading.Event()
        body = {"message": "slow: what is alpha?", "session_id": session}
        client = threading.Thread(target=stream_until_meta, args=(server.url, body, lines, meta))
        client.start()
        assert meta.wait(20)
        assert http.delete(f"/sessions/{session}").status_code == 200  # the turn cannot commit now
        client.join(120)
        assert not client.is_alive()
        events = sse_events("\n".join(lines) + "\n\n")
        name, data = events[-1]
        assert name == "error"
        error = json.loads(data)
        assert error["code"] == "SESSION_NOT_FOUND" and error["sessionId"] == session
        assert error["details"]["status"] == 404 and error["timestamp"]
        follow = http.post("/chat/completions", json={"message": "what is alpha?", "stream": False})
        assert follow.status_code == 200 and "Alpha is a widget." in follow.json()["response_markdown"]


def test_a_turn_whose_client_left_still_commits(harness):
    with ThreadServer(harness) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        session = http.post("/sessions").json()["session_id"]
        with httpx.stream(
            "POST", server.url + "/chat/completions", json={"message": "slow: alpha?", "session_id": session}
        ) as reply:
            for line in reply.iter_lines():
                if line.startswith("event: response.meta"):
                    break  # leave: the connection closes with the turn still running
        deadline = time.monotonic() + SLOW_MS / 1000 + 120  # every plugin starts cold here: slow when busy
        turns: list = []
        while time.monotonic() < deadline and not turns:
            turns = http.get(f"/sessions/{session}/explainability").json()["turns"]
            time.sleep(0.1)
        assert [t["user_message"] for t in turns] == ["slow: alpha?"]
        assert turns[0]["status"] == "success"


def test_an_unexpected_error_is_logged_and_answered_500_json(harness, caplog):
    with ThreadServer(harness) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        store = server.ctx.store
        original = store.list_kbs

        def broken():
            raise RuntimeError("disk on fire")

        store.list_kbs = broken
        try:
            with caplog.at_level("ERROR", logger="mrpvm.api"):
                reply = http.get("/kbs")
        finally:
            store.list_kbs = original
        assert reply.status_code == 500
        body = reply.json()
        assert body["code"] == "INTERNAL_ERROR" and "RuntimeError" in body["message"]
        assert "disk on fire" not in reply.text and "Traceback" not in reply.text
        assert any("disk on fire" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
        assert http.get("/kbs").status_code == 200


def test_openai_stream_failure_is_an_error_chunk_the_client_raises(harness):
    with ThreadServer(harness) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        session = http.post("/sessions").json()["session_id"]
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        stream = client.chat.completions.create(
            model="mrp-vm",
            messages=[{"role": "user", "content": "slow: what is alpha?"}],
            stream=True,
            extra_body={"session_id": session},
        )
        first = next(iter(stream))  # the role chunk arrives when the turn starts
        assert first.choices[0].delta.role == "assistant"
        assert http.delete(f"/sessions/{session}").status_code == 200
        with pytest.raises(openai.APIError) as failure:
            list(stream)
        assert "no session" in failure.value.message
        client.close()


def test_shutdown_drains_a_record_outcome_the_answer_did_not_wait_for(tmp_path):
    script = {
        **SCRIPT,
        "planner-a": {**SCRIPT["planner-a"], "recordOutcome": {"sleepMs": 800, "result": "ok"}},
    }
    harness = Harness(tmp_path, script)
    with ThreadServer(harness) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        reply = http.post("/chat/completions", json={"message": "what is alpha?", "stream": False})
        assert reply.status_code == 200, reply.text
        done = reply.json()
        (record,) = [n for n in done["execution_trace"]["nodes"] if n.get("op") == "recordOutcome"]
        server.stop()  # at once: the outcome call still runs and is drained before the workers stop
    assert [c["op"] for c in harness.calls("planner-a")][-1] == "recordOutcome"
    store = Store.open(harness.home)
    try:
        stored = {n["id"]: n for n in store.get_turn(done["request_id"]).trace["nodes"]}
    finally:
        store.close()
    assert stored[record["id"]]["status"] == "success"
    assert stored[record["id"]]["output"]["result"] == "ok"


def test_a_turn_past_its_deadline_is_504(tmp_path, monkeypatch):
    from mrpvm.shells.api import turns

    async def stuck(ctx, request, **_):  # an engine that never returns
        await anyio.sleep(30)

    monkeypatch.setattr(turns, "run_turn", stuck)
    monkeypatch.setattr(turns, "DEADLINE_GRACE_S", 0.1)
    harness = Harness(tmp_path, SCRIPT, budget={"requestTimeoutMs": 200})
    with ThreadServer(harness) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        reply = http.post("/chat/completions", json={"message": "what is alpha?", "stream": False})
        assert reply.status_code == 504 and reply.json()["code"] == "DEADLINE_EXCEEDED"
        streamed = sse_events(http.post("/chat/completions", json={"message": "what is alpha?"}).text)
        assert streamed[-1][0] == "error" and json.loads(streamed[-1][1])["code"] == "DEADLINE_EXCEEDED"
