"""Several machines, one PostgreSQL, a real haproxy in front (README "Running on several machines").

Three daemons on three homes (separate artifact folders: three machines) share one throwaway PostgreSQL;
haproxy, configured by the README's own configuration (servers and port replaced), balances 600 turns
over them without stickiness: 30 sessions of 20 turns, each session driven by two concurrent clients
(same-session races), half the turns streamed (SSE through the balancer). Meanwhile a source is
ingested through one node. Then: no turn lost or duplicated, dense turn indexes, no session unit held
twice, every node answers from the new source within a bounded time, and `kb check` is exact on every
node.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import anyio
import httpx
import pytest
from api_support import FACTS, SYMBOLIC, Daemon
from cli_support import cli_env, mrpvm
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.store import Store

NODES = 3
SESSIONS = 30
TURNS = 20  # per session: 600 in all
QUESTIONS = ["What does the zorblax eat?", "Where does the zorblax live?"]
NEW_SOURCE = "# Relay\n\nThe Quaxil relay sends its telemetry on port 7431.\n"
NEW_QUESTION = "Which port does the Quaxil relay use for telemetry?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def readme_haproxy(port: int, servers: list[str]) -> str:
    """The README's haproxy configuration, bound to a loopback port, with these servers, and a health
    check that may take 30 s (without `timeout check` it is `inter`, 2 s: three slow answers from a node
    busy with 20 turns on a loaded machine would mark it DOWN, and the balancer answer 503)."""
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    config = readme.split("```haproxy\n", 1)[1].split("```", 1)[0]
    assert "\ndefaults\n" in config and "timeout check" not in config
    config = config.replace("\ndefaults\n", "\ndefaults\n    timeout check 30s\n")
    config = config.replace("bind 0.0.0.0:8080", f"bind 127.0.0.1:{port}")
    lines = [line for line in config.splitlines() if not line.strip().startswith("server ")]
    lines += [f"    server node{i + 1} {addr} check" for i, addr in enumerate(servers)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def haproxy_bin() -> str:
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if found is None:
        import os

        if os.environ.get("CI"):
            pytest.fail("haproxy is not installed (.ci/run installs the Debian package)")
        pytest.skip("haproxy is not installed (Debian: apt-get install haproxy)")
    return found


@pytest.mark.slow
def test_three_nodes_behind_haproxy_lose_nothing(tmp_path, pg_url, haproxy_bin):
    env = {"MRPVM_STORE_URL": pg_url}
    # the name the README's health check sends, and the balancer's address the clients use
    serving = {**env, "MRPVM_API_ALLOWED_HOSTS": "mrpvm.example,127.0.0.1"}
    # queueing behind 20 turns per node on a loaded machine must not become a 504: no turn lost is checked,
    # not speed (the 1500 s bound below guards against a hang)
    serving["MRPVM_REQUEST_TIMEOUT_MS"] = "600000"
    daemons = [
        Daemon(tmp_path / f"home{i}", env={**serving, "MRPVM_NODE_ID": f"node-{i}"}).start(timeout=120)
        for i in range(NODES)
    ]
    proxy = None
    try:
        port = free_port()
        cfg = tmp_path / "haproxy.cfg"
        cfg.write_text(readme_haproxy(port, [d.url.removeprefix("http://").rstrip("/") for d in daemons]))
        checked = subprocess.run([haproxy_bin, "-c", "-f", str(cfg)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        proxy = subprocess.Popen([haproxy_bin, "-db", "-f", str(cfg)], stderr=subprocess.PIPE, text=True)
        balancer = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(balancer + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        with httpx.Client(base_url=daemons[0].url, timeout=60) as first:
            assert first.post("/kbs", json={"name": "docs"}).status_code == 201
            ingest_session = first.post("/sessions", json={"kb": "docs"}).json()["session_id"]

        errors: list[str] = []
        request_ids: dict[str, list[str]] = {}
        served_by: set[str] = set()

        async def turns(client: httpx.AsyncClient, session: str, lane: int) -> None:
            for turn in range(lane, TURNS, 2):
                body = {"message": QUESTIONS[turn % 2], "session_id": session, "stream": turn % 4 < 2}
                reply = await client.post("/chat/completions", json=body)
                if reply.status_code != 200 or "event: error" in reply.text:
                    errors.append(f"{session} turn {turn}: {reply.status_code} {reply.text[:300]}")
                    continue
                if body["stream"]:
                    found = re.search(
                        r'event: response.completed\ndata: \{"request_id":"([^"]+)"', reply.text
                    )
                    assert found, reply.text[-500:]
                    request_ids[session].append(found.group(1))
                else:
                    request_ids[session].append(reply.json()["request_id"])

        async def one_session(client: httpx.AsyncClient) -> None:
            created = await client.post("/sessions", json={})
            if created.status_code != 201:
                errors.append(f"POST /sessions: {created.status_code} {created.text[:300]}")
                return
            session = created.json()["session_id"]
            request_ids[session] = []
            loaded = await client.post(f"/sessions/{session}/context", json={"text": FACTS})
            if loaded.status_code != 200:
                errors.append(loaded.text)
            async with anyio.create_task_group() as lanes:  # two clients race on the session
                lanes.start_soon(turns, client, session, 0)
                lanes.start_soon(turns, client, session, 1)

        async def ingest() -> None:
            await anyio.sleep(2)
            async with httpx.AsyncClient(base_url=daemons[0].url, timeout=120) as direct:
                reply = await direct.post(
                    f"/sessions/{ingest_session}/workspace/sources",
                    json={"content": NEW_SOURCE, "name": "relay.md"},
                )
                if reply.status_code != 200:
                    errors.append(f"ingest: {reply.status_code} {reply.text[:300]}")

        async def main() -> None:
            limits = httpx.Limits(max_connections=2 * SESSIONS)
            async with httpx.AsyncClient(base_url=balancer, timeout=300, limits=limits) as client:
                with anyio.fail_after(1500):
                    async with anyio.create_task_group() as group:
                        group.start_soon(ingest)
                        for _ in range(SESSIONS):
                            group.start_soon(one_session, client)

        anyio.run(main)
        assert errors == []

        # every node answers from the new source within a bounded time (notices, else the 5 s poll)
        for daemon in daemons:
            deadline = time.monotonic() + 180
            with httpx.Client(base_url=daemon.url, timeout=120) as direct:
                while True:
                    reply = direct.post("/chat/completions", json={"message": NEW_QUESTION, "kb": "docs"})
                    if "7431" in reply.text:
                        break
                    assert time.monotonic() < deadline, f"{daemon.url} never answered from relay.md"
                    time.sleep(1)
                ready = direct.get("/ready").json()
                served_by.add(ready["store"]["node"])
                assert ready["store"]["backend"] == "postgresql" and ready["store"]["owed"]["sources"] == 0
        assert served_by == {f"node-{i}" for i in range(NODES)}
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=10)
        for daemon in daemons:
            daemon.stop()

    with Store.open(tmp_path / "home0", env) as store:
        assert store.integrity_check() == []
        for session, ids in request_ids.items():
            stored = store.list_turns(session)
            assert sorted(t.requestId for t in stored) == sorted(ids) and len(ids) == TURNS
            assert [t.turnIndex for t in stored] == list(range(TURNS))
            assert store.get_session(session).turnCount == TURNS
        doubled = store._conn().execute(
            "SELECT session_id, claim_key FROM units WHERE session_id IS NOT NULL"
            " GROUP BY session_id, claim_key HAVING COUNT(*) > 1"
        )
        assert doubled.fetchall() == []
        assert sum(len(v) for v in request_ids.values()) == SESSIONS * TURNS

    for i in range(NODES):  # kb check is exact on every node
        out = mrpvm(
            cli_env(tmp_path / f"home{i}")
            | env
            | {"MRPVM_NODE_ID": f"node-{i}", "MRPVM_ENABLED_PLUGINS": SYMBOLIC},
            "kb",
            "check",
            "docs",
            "--no-repair",
            "--json",
            timeout=180,
        )
        report = json.loads(out.stdout)
        assert out.returncode == 0 and report["ok"] and report["node"] == f"node-{i}", out.stdout
        assert [s["name"] for s in report["sources"]] == ["relay.md"]
        assert report["sources"][0]["acknowledged"] == ["kb-fast"]
