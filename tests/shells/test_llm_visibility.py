"""Whether an LLM is configured, and answers, is visible: `config show`, `settings llm-roles` and the
daemon's `/ready` name the endpoint (never the key), say whether it answers and the model per role."""

from __future__ import annotations

import json
import socket

from api_support import Daemon
from cli_support import cli_env, mrpvm
from llm_server import ScriptedLLM

KEY = "sk-very-secret-key-123"


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_no_llm_is_said_plainly(tmp_path):
    env = cli_env(tmp_path / "home")
    shown = json.loads(mrpvm(env, "config", "show", "--json").stdout)["llm"]
    assert shown["configured"] is False and shown["reachable"] is None
    assert "MRPVM_LLM_BASE_URL" in shown["problem"]
    human = mrpvm(env, "config", "show").stdout.decode()
    assert "LLM: none configured" in human and "symbolic plugins" in human
    roles = mrpvm(env, "settings", "llm-roles").stdout.decode()
    assert "LLM: none configured" in roles


def test_an_endpoint_that_does_not_answer_is_named_without_its_key(tmp_path):
    env = cli_env(tmp_path / "home")
    url = closed_url()
    env.update(MRPVM_LLM_BASE_URL=url, MRPVM_LLM_API_KEY=KEY, MRPVM_LLM_MODEL="tiny-model")
    proc = mrpvm(env, "config", "show", "--json", timeout=60)
    assert KEY not in proc.stdout.decode()
    llm = json.loads(proc.stdout)["llm"]
    assert llm["configured"] and llm["baseUrl"] == url and llm["apiKeySet"] and llm["reachable"] is False
    assert llm["roles"]["goal-fast"] == "tiny-model"
    human = mrpvm(env, "settings", "llm-roles", timeout=60).stdout.decode()
    assert f"LLM endpoint {url} (key set): does NOT answer" in human and KEY not in human
    data = json.loads(mrpvm(env, "settings", "llm-roles", "--json", timeout=60).stdout)
    assert data["endpoint"]["reachable"] is False and KEY not in json.dumps(data)


def test_a_live_endpoint_answers_in_config_show_and_ready(tmp_path):
    with ScriptedLLM(models=["tiny-model", "other"]) as llm:
        env = cli_env(tmp_path / "home")
        env.update(MRPVM_LLM_BASE_URL=llm.base_url, MRPVM_LLM_API_KEY=KEY)
        shown = json.loads(mrpvm(env, "config", "show", "--json", timeout=60).stdout)["llm"]
        assert shown["reachable"] is True and shown["models"] == ["tiny-model", "other"]
        with (
            Daemon(
                tmp_path / "daemon-home", env={"MRPVM_LLM_BASE_URL": llm.base_url, "MRPVM_LLM_API_KEY": KEY}
            ) as d,
            d.client() as http,
        ):
            reply = http.get("/ready")
        assert reply.status_code == 200 and KEY not in reply.text
        ready = reply.json()["llm"]
        assert ready["configured"] and ready["reachable"] is True and ready["baseUrl"] == llm.base_url
        assert set(ready["roles"]) >= {"goal-fast", "validation"}


def test_ready_stays_ready_when_the_llm_does_not_answer(tmp_path):
    with Daemon(tmp_path / "home", env={"MRPVM_LLM_BASE_URL": closed_url()}) as d, d.client() as http:
        reply = http.get("/ready")
    assert reply.status_code == 200
    assert reply.json()["llm"]["reachable"] is False and reply.json()["ready"] is True
