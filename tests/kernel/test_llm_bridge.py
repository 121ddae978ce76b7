"""The LLM bridge over real HTTP: loopback endpoint ⇄ bridge ⇄ a scripted OpenAI-compatible server.

Retries then structured errors, budgets counted at the upstream, the response cache, token expiry,
role resolution and the model list. Every call goes through 127.0.0.1 sockets; nothing is mocked.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from llm_server import ScriptedLLM, garbage, no_choices, reply, sleep, status, truncated
from mrpvm.kernel.llm import CallBudget, LLMBridge
from mrpvm.kernel.store import Store

MESSAGES = [{"role": "user", "content": "What is WAL?"}]


def bridge_env(llm: ScriptedLLM | None, **extra: str) -> dict[str, str]:
    env = {"MRPVM_LLM_TIMEOUT_MS": "60000", "MRPVM_LLM_MAX_ATTEMPTS": "3", "MRPVM_LLM_BACKOFF_MS": "10"}
    if llm is not None:
        env["MRPVM_LLM_BASE_URL"] = llm.base_url
    env.update(extra)
    return env


class Session:
    """One started bridge on a real store, and an HTTP client for the loopback endpoint."""

    def __init__(self, bridge: LLMBridge, http: httpx.AsyncClient):
        self.bridge, self.http = bridge, http

    def token(
        self,
        request_id: str = "req-1",
        plugin: str = "gs-llm-fast",
        role: str | None = "goal-fast",
        calls: int = 5,
        deadline_s: float = 30.0,
        call_ref: str | None = None,
    ) -> str:
        deadline = time.monotonic() + deadline_s
        return self.bridge.tokens.issue(request_id, "frame-0", plugin, role, calls, deadline, call_ref)

    async def chat(self, token: str | None, body: dict[str, Any] | None = None, headers: dict | None = None):
        head = dict(headers or {})
        if token is not None:
            head["Authorization"] = f"Bearer {token}"
        payload = body if body is not None else {"model": "ignored", "messages": MESSAGES, "temperature": 0}
        return await self.http.post(f"{self.bridge.base_url}/chat/completions", json=payload, headers=head)


def run_with_bridge(tmp_path: Path, env: dict[str, str], body, budget: int = 8) -> Any:
    async def main():
        store = Store(tmp_path / "mrpvm.db")
        try:
            async with (
                LLMBridge.from_environ(env, store=store) as bridge,
                httpx.AsyncClient(timeout=30) as http,
            ):
                bridge.open_request("req-1", CallBudget(budget))
                return await body(Session(bridge, http))
        finally:
            store.close()

    return anyio.run(main)


def test_no_upstream_means_unavailable(tmp_path: Path) -> None:
    async def body(s: Session):
        assert not s.bridge.available
        assert s.bridge.base_url is None
        assert s.bridge.access("req-1", "f", "gs-llm-fast", "goal-fast", 2, time.monotonic() + 5) is None

    run_with_bridge(tmp_path, bridge_env(None), body)


def test_completion_through_the_loopback_endpoint(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply("WAL appends changes to a separate file.", prompt_tokens=21, completion_tokens=9))

        async def body(s: Session):
            assert s.bridge.available and s.bridge.base_url.startswith("http://127.0.0.1:")
            access = s.bridge.access(
                "req-1", "frame-0", "gs-llm-fast", "goal-fast", 1, time.monotonic() + 30, call_ref="n7"
            )
            assert access is not None and access.baseUrl == s.bridge.base_url
            response = await s.chat(access.apiKey)
            assert response.status_code == 200
            assert (
                response.json()["choices"][0]["message"]["content"]
                == "WAL appends changes to a separate file."
            )
            assert s.bridge.release(access.apiKey) == 1
            return s.bridge.drain_events("req-1", call_ref="n7")

        events = run_with_bridge(tmp_path, bridge_env(llm), body)
        assert llm.count == 1
        assert llm.bodies[0]["messages"] == MESSAGES and llm.bodies[0]["stream"] is False
        # No role model configured: the upstream's first listed model is used.
        assert llm.bodies[0]["model"] == "test-model-a"
        [event] = events
        assert (event.status, event.cacheHit, event.promptTokens, event.completionTokens) == (
            "success",
            False,
            21,
            9,
        )
        assert event.pluginId == "gs-llm-fast" and event.role == "goal-fast" and event.attempts == 1
        fields = event.trace_fields()
        assert fields["status"] == "success" and fields["output"]["model"] == "test-model-a"


def test_transient_failures_are_retried_until_success(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(status(500), status(429, retry_after=0), reply("third time lucky"))

        async def body(s: Session):
            response = await s.chat(s.token())
            return response.status_code, response.json(), s.bridge.drain_events("req-1")

        code, data, events = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body)
        assert code == 200 and data["choices"][0]["message"]["content"] == "third time lucky"
        assert llm.count == 3
        assert events[0].attempts == 3


@pytest.mark.parametrize(
    ("fault", "code", "http_status"),
    [
        (lambda: status(500), "llm_upstream_error", 502),
        (lambda: status(503), "llm_upstream_error", 502),
        (lambda: status(429, retry_after=0), "llm_rate_limited", 502),
        (garbage, "llm_bad_response", 502),
        (truncated, "llm_bad_response", 502),
        (lambda: sleep(10.0), "llm_timeout", 504),
    ],
    ids=["500", "503", "429", "garbage-json", "truncated-body", "timeout"],
)
def test_persistent_failures_become_structured_errors_after_retries(
    tmp_path: Path, fault, code, http_status
) -> None:
    with ScriptedLLM() as llm:
        llm.push(fault(), fault(), fault())
        # a short timeout only where the timeout is the fault: a loaded machine must not turn a 500 into one;
        # 2 s (the upstream holds 10 s) so that each attempt's request still reaches the upstream when busy
        timeout_ms = "2000" if code == "llm_timeout" else "20000"
        env = bridge_env(llm, MRPVM_LLM_MODEL="m", MRPVM_LLM_TIMEOUT_MS=timeout_ms)

        async def body(s: Session):
            response = await s.chat(s.token())
            return response.status_code, response.json(), s.bridge.drain_events("req-1")

        got_status, data, events = run_with_bridge(tmp_path, env, body)
        assert got_status == http_status
        assert data["error"]["code"] == code
        assert data["error"]["message"]
        assert data["error"]["details"]["attempts"] == 3
        # the upstream saw the request (it may have run the model): the call is charged
        assert data["error"]["details"]["reachedUpstream"] is True
        assert data["error"]["details"]["charged"] is True
        assert llm.count == 3  # every attempt reached the upstream, none more
        [event] = events
        assert event.status == "error" and event.code == code.upper() and event.attempts == 3


def test_valid_json_without_choices_fails_at_once(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(no_choices(), reply("never reached"))

        async def body(s: Session):
            response = await s.chat(s.token())
            return response.status_code, response.json()

        code, data = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body)
        assert code == 502 and data["error"]["code"] == "llm_bad_response"
        assert "no choices" in data["error"]["message"]
        assert llm.count == 1


def test_unreachable_upstream_is_a_connection_error(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        dead = llm.base_url
    env = bridge_env(None, MRPVM_LLM_BASE_URL=dead, MRPVM_LLM_MODEL="m")  # the server is closed now

    async def body(s: Session):
        response = await s.chat(s.token())
        return response.status_code, response.json()

    code, data = run_with_bridge(tmp_path, env, body)
    assert code == 502 and data["error"]["code"] == "llm_connection_error"


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed): connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "dead_url",
    [lambda: f"http://127.0.0.1:{closed_port()}/v1", lambda: "http://mrpvm-no-such-host.invalid/v1"],
    ids=["connection-refused", "dns-failure"],
)
def test_an_unreachable_upstream_costs_no_llm_call(tmp_path: Path, dead_url) -> None:
    env = bridge_env(None, MRPVM_LLM_BASE_URL=dead_url(), MRPVM_LLM_MODEL="m", MRPVM_LLM_MAX_ATTEMPTS="2")

    async def body(s: Session):
        budget = CallBudget(1)
        s.bridge.open_request("req-d", budget)
        token = s.token(request_id="req-d", calls=1)  # one call allowed: a charged failure would use it
        answers = []
        for i in range(4):
            response = await s.chat(token, {"messages": [{"role": "user", "content": f"q{i}"}]})
            answers.append((response.status_code, response.json()["error"]))
        return answers, budget.llm_calls_used, s.bridge.release(token), s.bridge.drain_events("req-d")

    answers, used, counted, events = run_with_bridge(tmp_path, env, body)
    for code, error in answers[:3]:  # neither the request budget nor the token's allowance was spent
        assert (code, error["code"]) == (502, "llm_connection_error")
        assert error["details"]["attempts"] == 2
        assert error["details"]["reachedUpstream"] is False and error["details"]["charged"] is False
    # ...but every failure counts for the breaker: after three the bridge stops trying
    assert (answers[3][0], answers[3][1]["code"]) == (503, "llm_unavailable")
    assert (used, counted) == (0, 0)
    assert [(e.status, e.code) for e in events] == [("error", "LLM_CONNECTION_ERROR")] * 3 + [
        ("error", "LLM_UNAVAILABLE")
    ]


def test_concurrent_calls_never_overdraw_the_request_budget(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.responder = lambda body: sleep(0.3, reply("slow answer"))

        async def body(s: Session):
            budget = CallBudget(1)
            s.bridge.open_request("req-c", budget)
            tokens = [s.token(request_id="req-c", plugin=p) for p in ("gs-llm-fast", "sd-llm-fast")]
            codes: list[int] = []

            async def one(token: str, i: int) -> None:
                response = await s.chat(token, {"messages": [{"role": "user", "content": f"c{i}"}]})
                codes.append(response.status_code)

            async with anyio.create_task_group() as group:
                for i, token in enumerate(tokens):
                    group.start_soon(one, token, i)
            return sorted(codes), budget.llm_calls_used

        codes, used = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body)
        assert codes == [200, 429] and used == 1 and llm.count == 1


def test_request_budget_is_shared_and_enforced_at_the_upstream(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.responder = lambda body: reply(f"answer to {body['messages'][-1]['content']}")

        async def body(s: Session):
            first, second = s.token(plugin="sd-llm-fast", role="seed-fast"), s.token(plugin="gs-llm-fast")
            codes = []
            for i, token in enumerate([first, second, first, second]):
                response = await s.chat(token, {"messages": [{"role": "user", "content": f"q{i}"}]})
                codes.append((response.status_code, response.json()))
            return codes, s.bridge.drain_events("req-1")

        codes, events = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body, budget=2)
        assert [c for c, _ in codes] == [200, 200, 429, 429]
        refusal = codes[2][1]["error"]
        assert refusal["code"] == "llm_budget_exhausted" and refusal["type"] == "insufficient_quota"
        assert llm.count == 2  # the third and fourth calls never reached the upstream
        assert [e.status for e in events] == ["success", "success", "refused", "refused"]


def test_a_plugin_call_cannot_exceed_its_own_allowance(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.responder = lambda body: reply("ok")

        async def body(s: Session):
            token = s.token(calls=1)
            a = await s.chat(token, {"messages": [{"role": "user", "content": "one"}]})
            b = await s.chat(token, {"messages": [{"role": "user", "content": "two"}]})
            return a.status_code, b.status_code, b.json(), s.bridge.release(token)

        a, b, data, counted = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body, budget=10)
        assert (a, b) == (200, 429) and data["error"]["code"] == "llm_budget_exhausted"
        assert llm.count == 1 and counted == 1


def test_repeated_call_is_served_from_the_cache(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.responder = lambda body: reply(f"fresh {len(llm.bodies)}")
        env = bridge_env(llm, MRPVM_LLM_MODEL="m")

        async def body(s: Session):
            token = s.token(calls=10)
            first = (await s.chat(token)).json()
            second = (await s.chat(token)).json()
            other_params = (await s.chat(token, {"messages": MESSAGES, "temperature": 0.7})).json()
            bypass = (await s.chat(token, headers={"Cache-Control": "no-cache"})).json()
            return (
                first,
                second,
                other_params,
                bypass,
                s.bridge.drain_events("req-1"),
                s.bridge.release(token),
            )

        first, second, other, bypass, events, counted = run_with_bridge(tmp_path, env, body, budget=10)
        content = [d["choices"][0]["message"]["content"] for d in (first, second, other, bypass)]
        assert content[0] == content[1] == "fresh 1"
        assert content[2] == "fresh 2" and content[3] == "fresh 3"
        assert llm.count == 3  # the repeat never reached the upstream
        assert [e.cacheHit for e in events] == [False, True, False, False]
        assert counted == 4  # the plugin's allowance counts cache hits too

        # The cache lives in the database: a new bridge on the same file still hits it.
        def again(tmp: Path):
            async def body2(s: Session):
                return (await s.chat(s.token())).json()["choices"][0]["message"]["content"]

            return run_with_bridge(tmp, env, body2)

        # (The bypassed call refreshed the entry for that key.)
        assert again(tmp_path) == "fresh 3"
        assert llm.count == 3


def test_cache_can_be_turned_off(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.responder = lambda body: reply("same")

        async def body(s: Session):
            token = s.token()
            return [(await s.chat(token)).status_code for _ in range(2)]

        assert run_with_bridge(
            tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m", MRPVM_LLM_CACHE="off"), body
        ) == [200, 200]
        assert llm.count == 2


def test_unknown_released_expired_and_missing_tokens_are_refused(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.responder = lambda body: reply("should not be reached")

        async def body(s: Session):
            released = s.token()
            s.bridge.release(released)
            late = s.token(deadline_s=-5.0)  # its plugin call's deadline is long past
            s.bridge.open_request("req-2", CallBudget(5))
            of_finished_request = s.token(request_id="req-2")
            s.bridge.expire_request("req-2")
            out = {}
            for name, token in [
                ("unknown", "mrpvm-forged"),
                ("released", released),
                ("late", late),
                ("finished", of_finished_request),
                ("missing", None),
            ]:
                response = await s.chat(token)
                out[name] = (response.status_code, response.json()["error"]["code"])
            return out

        results = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body)
        assert results == {name: (401, "llm_token_invalid") for name in results}
        assert set(results) == {"unknown", "released", "late", "finished", "missing"}
        assert llm.count == 0


def test_malformed_plugin_request_is_a_400_and_costs_nothing(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:

        async def body(s: Session):
            token = s.token()
            bad = await s.chat(token, {"messages": []})
            not_json = await s.http.post(
                f"{s.bridge.base_url}/chat/completions",
                content=b"{nope",
                headers={"Authorization": f"Bearer {token}"},
            )
            return bad.status_code, bad.json()["error"]["code"], not_json.status_code, s.bridge.release(token)

        assert run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body) == (
            400,
            "llm_bad_request",
            400,
            0,
        )
        assert llm.count == 0


def test_models_come_from_the_upstream(tmp_path: Path) -> None:
    with ScriptedLLM(models=["llama-3-8b", "qwen2-7b"]) as llm:

        async def body(s: Session):
            direct = await s.bridge.available_models()
            response = await s.http.get(
                f"{s.bridge.base_url}/models", headers={"Authorization": f"Bearer {s.token()}"}
            )
            anonymous = await s.http.get(f"{s.bridge.base_url}/models")
            return direct, response.json(), anonymous.status_code

        direct, listed, anonymous = run_with_bridge(tmp_path, bridge_env(llm), body)
        assert direct == ["llama-3-8b", "qwen2-7b"]
        assert [m["id"] for m in listed["data"]] == direct
        assert anonymous == 401
        assert llm.model_requests == 1  # cached for the second listing


def test_stream_requests_get_server_sent_events(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply("streamed answer"))

        async def body(s: Session):
            response = await s.chat(s.token(), {"messages": MESSAGES, "stream": True})
            return response.status_code, response.headers["content-type"], response.text

        code, ctype, text = run_with_bridge(tmp_path, bridge_env(llm, MRPVM_LLM_MODEL="m"), body)
        assert code == 200 and ctype.startswith("text/event-stream")
        assert '"content": "streamed answer"' in text.replace('":"', '": "') and text.rstrip().endswith(
            "data: [DONE]"
        )
        assert llm.bodies[0]["stream"] is False  # the upstream call itself is whole


def test_role_model_reaches_the_upstream(tmp_path: Path) -> None:
    from mrpvm.kernel.llm.settings import RoleTable
    from mrpvm.kernel.store import Store

    settings = Store(tmp_path / "mrpvm.db")
    RoleTable(settings).update(
        {"goal-deep": "big-model", "plugin:val-llm": "judge-model", "default": "small"}
    )
    settings.close()
    with ScriptedLLM() as llm:
        llm.responder = lambda body: reply("ok")

        async def body(s: Session):
            for plugin, role in [
                ("gs-llm-deep", "goal-deep"),
                ("val-llm", "validation"),
                ("gs-llm-fast", "goal-fast"),
            ]:
                access = s.bridge.access("req-1", "f", plugin, role, 1, time.monotonic() + 30)
                assert (
                    await s.chat(access.apiKey, {"messages": [{"role": "user", "content": plugin}]})
                ).status_code == 200
            return [e.modelSource for e in s.bridge.drain_events("req-1")]

        sources = run_with_bridge(tmp_path, bridge_env(llm), body)
        assert [b["model"] for b in llm.bodies] == ["big-model", "judge-model", "small"]
        assert sources == ["role", "plugin", "default"]


def test_a_dead_upstream_trips_the_breaker_without_spending_budget(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(status(500), status(502), status(503), reply("never reached while the breaker is open"))
        env = bridge_env(llm, MRPVM_LLM_MODEL="m", MRPVM_LLM_MAX_ATTEMPTS="1")

        async def body(s: Session):
            budget = CallBudget(10)
            s.bridge.open_request("req-b", budget)
            token = s.token(request_id="req-b", calls=10)
            codes = []
            for i in range(4):
                response = await s.chat(token, {"messages": [{"role": "user", "content": f"q{i}"}]})
                codes.append((response.status_code, response.json()["error"]["code"]))
            return codes, budget.llm_calls_used

        codes, used = run_with_bridge(tmp_path, env, body)
        assert codes[:3] == [(502, "llm_upstream_error")] * 3
        assert codes[3] == (503, "llm_unavailable")
        assert llm.count == 3 and used == 3  # the refused call cost nothing and reached nothing


@pytest.mark.parametrize("end", ["release", "expire"])
def test_an_ended_plugin_call_cancels_its_upstream_call(tmp_path: Path, end: str) -> None:
    """The plugin call is over (released, or the whole request expired) while the model still works:
    the bridge stops waiting for the upstream and answers at once; the breaker learns nothing."""
    with ScriptedLLM() as llm:
        llm.responder = lambda body: sleep(60, reply("nobody reads this"))

        async def body(s: Session):
            token = s.token(calls=2)
            answer: dict[str, Any] = {}

            async def call() -> None:
                response = await s.chat(token)
                answer["status"], answer["body"] = response.status_code, response.json()

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                with anyio.fail_after(60):  # a guard against a hang, not a timing target
                    while llm.count == 0:
                        await anyio.sleep(0.01)
                    s.bridge.release(token) if end == "release" else s.bridge.expire_request("req-1")
            events = s.bridge.drain_events("req-1") if end == "release" else []
            return answer, events, s.bridge._failures

        env = bridge_env(llm, MRPVM_LLM_TIMEOUT_MS="120000")
        answer, events, failures = run_with_bridge(tmp_path, env, body)
        assert answer["status"] == 401
        assert answer["body"]["error"]["code"] == "llm_token_invalid"
        assert "cancelled" in answer["body"]["error"]["message"]
        assert failures == 0
        if end == "release":
            assert [(e.status, e.code) for e in events] == [("error", "LLM_TOKEN_INVALID")]


def test_a_token_released_before_its_call_reaches_the_upstream_never_reaches_it(tmp_path: Path) -> None:
    """The plugin call ends while the bridge still resolves the model (the upstream's /models is slow):
    the call must not go upstream afterwards, nor cost the request a call."""
    import threading

    with ScriptedLLM() as llm:
        llm.models_gate = threading.Event()
        llm.responder = lambda body: reply("nobody should ask")

        async def body(s: Session):
            budget = CallBudget(4)
            s.bridge.open_request("req-r", budget)
            token = s.token(request_id="req-r", role=None, calls=2)
            answer: dict[str, Any] = {}

            async def call() -> None:
                response = await s.chat(token)
                answer["status"], answer["body"] = response.status_code, response.json()

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                with anyio.fail_after(60):  # a guard against a hang, not a timing target
                    while llm.model_requests == 0:
                        await anyio.sleep(0.01)
                    counted = s.bridge.release(token)
                    llm.models_gate.set()
            return answer, counted, budget.llm_calls_used

        answer, counted, used = run_with_bridge(tmp_path, bridge_env(llm), body)
        assert answer["status"] == 401
        assert answer["body"]["error"]["code"] == "llm_token_invalid"
        assert llm.count == 0 and counted == 0 and used == 0


def test_a_cancelled_call_is_in_the_events_drained_when_its_token_is_released(tmp_path: Path) -> None:
    """The engine releases a plugin call's token and drains that call's events at once (one `llm`
    trace node each): a call cancelled by the release was charged, so it must be among them."""
    with ScriptedLLM() as llm:
        llm.responder = lambda body: sleep(60, reply("nobody reads this"))

        async def body(s: Session):
            budget = CallBudget(4)
            s.bridge.open_request("req-c", budget)
            token = s.token(request_id="req-c", calls=2, call_ref="node-7")
            async with anyio.create_task_group() as group:
                group.start_soon(s.chat, token)
                with anyio.fail_after(60):
                    while llm.count == 0:
                        await anyio.sleep(0.01)
                counted = s.bridge.release(token)
                drained = s.bridge.drain_events("req-c", call_ref="node-7")  # no await in between
            late = s.bridge.drain_events("req-c")
            return counted, drained, late, budget.llm_calls_used

        env = bridge_env(llm, MRPVM_LLM_TIMEOUT_MS="120000")
        counted, drained, late, used = run_with_bridge(tmp_path, env, body)
        assert counted == used == 1
        assert [(e.status, e.code, e.callRef) for e in drained] == [("error", "LLM_TOKEN_INVALID", "node-7")]
        assert late == []  # recorded once


def test_an_answer_that_arrived_before_the_release_is_recorded_as_answered() -> None:
    """The upstream's answer is in, but the bridge's task has not run again when the plugin call ends:
    the call succeeded (and was charged), so its event says so, with its usage, and is drained once."""
    from mrpvm.kernel.llm.client import Completion
    from mrpvm.kernel.llm.events import LLMCallEvent
    from mrpvm.kernel.llm.tokens import InFlight, TokenTable

    async def main():
        table = TokenTable()
        table.open_request("req-a", CallBudget(3))
        token = table.issue("req-a", "frame-0", "gs-x", None, 2, time.monotonic() + 30, "node-1")
        grant, _ = table.check(token)
        grant.calls_used = 1
        call = asyncio.get_running_loop().create_future()
        call.set_result(Completion(body={}, content="hi", prompt_tokens=5, completion_tokens=2, attempts=1))
        event = LLMCallEvent(requestId="req-a", callRef="node-1", pluginId="gs-x")
        grant.upstream[call] = InFlight(event, time.perf_counter())
        counted = table.release(token)
        return counted, table.drain("req-a", call_ref="node-1"), table.drain("req-a"), call.cancelled()

    counted, drained, left, cancelled = anyio.run(main)
    assert counted == 1 and not cancelled
    assert [(e.status, e.promptTokens, e.completionTokens, e.attempts) for e in drained] == [
        ("success", 5, 2, 1)
    ]
    assert left == []
