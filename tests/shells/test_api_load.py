"""Bounded load: 20 concurrent sessions x 10 turns through the daemon on the symbolic plugins.

0 errors, and every turn is committed exactly once (explainability and the store agree). The test stops by
itself: each request has a timeout and the whole run is bounded by anyio.fail_after.
"""

from __future__ import annotations

import anyio
import httpx
import pytest
from api_support import FACTS, Daemon
from mrpvm.kernel.store import Store

SESSIONS = 20
TURNS = 10
QUESTIONS = ["What does the zorblax eat?", "Where does the zorblax live?"]


@pytest.mark.slow
def test_concurrent_sessions_lose_no_turns(tmp_path):
    home = tmp_path / "home"
    # a turn queued behind 19 others on a loaded machine must not become a 504 (the daemon's 60 s default)
    with Daemon(home, env={"MRPVM_REQUEST_TIMEOUT_MS": "600000"}) as daemon:
        errors: list[str] = []
        request_ids: dict[str, list[str]] = {}

        async def one_session(client: httpx.AsyncClient, n: int) -> None:
            created = await client.post("/sessions", json={})
            session = created.json()["session_id"]
            request_ids[session] = []
            loaded = await client.post(f"/sessions/{session}/context", json={"text": FACTS})
            if loaded.status_code != 200:
                errors.append(loaded.text)
            for turn in range(TURNS):
                body = {"message": QUESTIONS[(n + turn) % 2], "session_id": session, "stream": turn % 2 == 0}
                reply = await client.post("/chat/completions", json=body)
                if reply.status_code != 200 or "event: error" in reply.text:
                    errors.append(f"{session} turn {turn}: {reply.status_code} {reply.text[:200]}")
                    continue
                if body["stream"]:
                    marker = 'event: response.completed\ndata: {"request_id":"'
                    start = reply.text.index(marker) + len(marker)
                    request_ids[session].append(reply.text[start : reply.text.index('"', start)])
                else:
                    request_ids[session].append(reply.json()["request_id"])

        async def main() -> None:
            limits = httpx.Limits(max_connections=SESSIONS)
            async with httpx.AsyncClient(base_url=daemon.url, timeout=300.0, limits=limits) as client:
                with anyio.fail_after(900):  # a bound on a hang, not on throughput (a busy machine is slow)
                    async with anyio.create_task_group() as group:
                        for n in range(SESSIONS):
                            group.start_soon(one_session, client, n)

        anyio.run(main)
        assert errors == []
        assert len(request_ids) == SESSIONS
        with daemon.client() as http:
            for session, ids in request_ids.items():
                turns = http.get(f"/sessions/{session}/explainability").json()["turns"]
                assert [t["request_id"] for t in turns] == ids
                assert [t["turn_index"] for t in turns] == list(range(TURNS))
                assert all(t["status"] == "success" for t in turns)
    store = Store.open(home)  # after shutdown: what is durable
    try:
        for session, ids in request_ids.items():
            assert [t.requestId for t in store.list_turns(session)] == ids
            assert store.get_session(session).turnCount == TURNS
    finally:
        store.close()
