"""Supervisor, worker mode: the fault matrix against real worker processes (tests/support/plugins/misbehave.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import (
    CRASHED,
    INVALID_CNL,
    OUTPUT_TOO_LARGE,
    PROTOCOL_ERROR,
    TIMEOUT,
)
from supervisor_support import (
    MAX_OUTPUT,
    answer_json,
    error_of,
    new_supervisor,
    request,
    run,
    wait_file,
    wait_gone,
)


async def worker_pid(sup, plugin: str = "bad-worker") -> int:
    result = await sup.call(plugin, request("pid"))
    return answer_json(result)["pid"]


def test_warm_worker_is_reused_and_answers_in_order(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            first = await sup.call("bad-worker", request("echo:one"))
            pids = {await worker_pid(sup) for _ in range(5)}
            second = await sup.call("bad-worker", request("echo:two"))
            return first, second, pids, sup.health()["bad-worker"]

    first, second, pids, health = run(go)
    assert first.document.answer == "echo one" and second.document.answer == "echo two"
    assert first.mode == "worker"
    assert len(pids) == 1  # sequential calls reuse one warm process
    assert health["spawns"] == 1 and health["calls"] == 7 and health["failures"] == 0
    assert first.document.result.request is not None


def test_crash_mid_request_reports_stderr_and_next_call_works(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            pid = await worker_pid(sup)
            err = await error_of(sup.call("bad-worker", request("crash:7")))
            after = await worker_pid(sup)
            return pid, err, after

    pid, err, after = run(go)
    assert err.error.code == CRASHED
    assert err.error.exitCode == 7
    assert "crashing on purpose" in err.error.stderrTail
    assert err.error.plugin == "bad-worker" and err.error.op == "solve"
    assert after != pid


def test_crash_with_stderr_json_keeps_the_plugin_code(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            return await error_of(sup.call("bad-worker", request("crash-json:1")))

    err = run(go)
    assert err.error.code == CRASHED
    assert err.error.details["pluginCode"] == "BOOM"


def test_hang_past_deadline_kills_the_worker_and_a_fresh_one_serves(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            # Warm first: the short deadline below must measure the hang, not a cold start that a loaded
            # machine can stretch past it. The idle warm worker is the one that takes the hanging request.
            hung = await worker_pid(sup)
            err = await error_of(sup.call("bad-worker", request("hang"), timeout_s=0.5))
            gone = await wait_gone(hung)
            fresh = await worker_pid(sup)
            return err, hung, gone, fresh

    err, hung, gone, fresh = run(go)
    assert err.error.code == TIMEOUT
    assert gone, "the worker that overran its deadline is still running"
    assert fresh != hung


def test_deadline_is_sent_to_the_plugin(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            sent = []
            original = sup._worker_call  # capture what goes on the wire

            async def spy(plugin, loop, frame, rid, deadline, *rest):
                sent.append(frame)
                return await original(plugin, loop, frame, rid, deadline, *rest)

            sup._worker_call = spy  # type: ignore[method-assign]
            await sup.call("echo-worker", request("hello"), timeout_s=1.25)
            await sup.call("echo-worker", request("hello"), timeout_s=99)
            return sent

    sent = run(go)
    assert b'"deadlineMs":1250' in sent[0]
    assert b'"deadlineMs":5000' in sent[1]  # capped by the manifest's timeoutMs


def test_garbage_output_is_a_protocol_error(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            pid = await worker_pid(sup)
            err = await error_of(sup.call("bad-worker", request("garbage")))
            gone = await wait_gone(pid)
            after = await sup.call("bad-worker", request("echo:fine"))
            return err, gone, after

    err, gone, after = run(go)
    assert err.error.code == PROTOCOL_ERROR
    assert "not a frame header" in err.error.message
    assert gone
    assert after.document.answer == "echo fine"


def test_invalid_cnl_names_line_and_rule_and_keeps_the_worker(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            pid = await worker_pid(sup)
            err = await error_of(sup.call("bad-worker", request("badcnl")))
            return pid, err, await worker_pid(sup)

    pid, err, after = run(go)
    assert err.error.code == INVALID_CNL
    issues = err.error.details["issues"]
    assert {k: issues[0][k] for k in ("line", "rule")} == {"line": 2, "rule": "enum"}
    assert after == pid  # framing was intact: the worker is still trusted


def test_output_over_the_cap_kills_the_worker(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            pid = await worker_pid(sup)
            err = await error_of(sup.call("bad-worker", request(f"big:{MAX_OUTPUT * 2}")))
            gone = await wait_gone(pid)
            fine = await sup.call("bad-worker", request(f"big:{MAX_OUTPUT // 2}"))
            return err, gone, fine

    err, gone, fine = run(go)
    assert err.error.code == OUTPUT_TOO_LARGE
    assert str(MAX_OUTPUT) in err.error.message
    assert gone
    assert len(fine.document.answer or "") == MAX_OUTPUT // 2


def test_wrong_request_id_is_a_protocol_error(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            err = await error_of(sup.call("bad-worker", request("wrongid")))
            after = await sup.call("bad-worker", request("echo:next"))
            return err, after

    err, after = run(go)
    assert err.error.code == PROTOCOL_ERROR
    assert err.error.details["got"].startswith("not-")
    assert after.document.answer == "echo next"


def test_two_frames_for_one_request_never_leak_into_the_next_call(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            outcomes = []
            for _ in range(3):
                try:
                    outcomes.append((await sup.call("bad-worker", request("twoframes"))).document.answer)
                except Exception as err:  # PluginCallError when both frames arrive in one read
                    outcomes.append(err.error.code)  # type: ignore[attr-defined]
                outcomes.append((await sup.call("bad-worker", request("echo:after"))).document.answer)
            return outcomes

    outcomes = run(go)
    assert outcomes[1::2] == ["echo after"] * 3  # the stray second frame is never taken as an answer
    assert set(outcomes[0::2]) <= {"first", PROTOCOL_ERROR}


def test_worker_killed_with_sigkill_mid_request(registry: Registry, tmp_path: Path) -> None:
    pidfile = tmp_path / "victim.pid"

    async def go():
        async with new_supervisor(registry) as sup:
            outcome: dict = {}
            await worker_pid(sup)  # warm: the manifest's 5 s deadline must not run out on a cold start

            async def victim():
                outcome["err"] = await error_of(sup.call("bad-worker", request(f"hang:{pidfile}")))

            async with anyio.create_task_group() as tg:
                tg.start_soon(victim)
                pid = int(await wait_file(pidfile))
                os.kill(pid, signal.SIGKILL)
            return outcome["err"], pid, await worker_pid(sup)

    err, pid, after = run(go)
    assert err.error.code == CRASHED
    assert err.error.exitCode == -signal.SIGKILL
    assert after != pid


def test_worker_exiting_between_calls_does_not_fail_the_next_call(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            answers = []
            for _ in range(5):  # immediately after the exit: the death may not be seen yet
                answers.append((await sup.call("bad-worker", request("exit-after"))).document.answer)
                answers.append((await sup.call("bad-worker", request("echo:still-here"))).document.answer)
            pid = await worker_pid(sup)
            bye = await sup.call("bad-worker", request("exit-after"))
            await wait_gone(pid)  # now the death is certainly seen first
            later = await sup.call("bad-worker", request("echo:later"))
            return answers, bye, later, sup.health()["bad-worker"]

    answers, bye, later, health = run(go)
    assert answers == ["bye", "echo still-here"] * 5
    assert bye.document.answer == "bye" and later.document.answer == "echo later"
    assert health["failures"] == 0


def test_idle_worker_killed_externally_is_replaced(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            pid = await worker_pid(sup)
            os.kill(pid, signal.SIGKILL)
            await wait_gone(pid)
            await anyio.sleep(0.05)
            return pid, await worker_pid(sup), sup.health()["bad-worker"]

    pid, after, health = run(go)
    assert after != pid
    assert health["failures"] == 0 and health["spawns"] == 2


def test_chatty_stderr_never_blocks_and_the_tail_stays_bounded(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            ok = await sup.call("bad-worker", request("chatty:32"))  # 2 MB of stderr, pipe holds 64 KB
            err = await error_of(sup.call("bad-worker", request("crash")))
            return ok, err

    ok, err = run(go)
    assert ok.document.answer == "chatted"
    assert "crashing on purpose" in err.error.stderrTail
    assert len(err.error.stderrTail) <= 8192


def test_cancelled_call_kills_the_busy_worker(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            pid = await worker_pid(sup)  # warm, so the cancel finds it busy with the request, not starting
            with anyio.move_on_after(0.3):
                await sup.call("bad-worker", request("hang"))
            gone = await wait_gone(pid)
            return gone, (await sup.call("bad-worker", request("echo:again"))).document.answer

    gone, answer = run(go)
    assert gone
    assert answer == "echo again"


def test_busy_poll_when_alone_in_flight_but_never_while_a_batch_starts(
    registry: Registry, monkeypatch
) -> None:
    from mrpvm.kernel.supervisor.process import ChildProcess

    polls = {"n": 0}
    real_poll = ChildProcess.poll_stdout

    def counting_poll(self) -> bool:
        polls["n"] += 1
        return real_poll(self)

    monkeypatch.setattr(ChildProcess, "poll_stdout", counting_poll)

    async def go():
        async with new_supervisor(registry, spin_us=50_000) as sup:
            # The pool learns that this plugin answers fast. The first call's time includes the worker's
            # start (long on a loaded machine); enough fast calls after it bring the average below spin_us.
            for _ in range(30):
                await sup.call("bad-worker", request("echo:warm"))
            alone = polls["n"]
            polls["n"] = 0
            async with anyio.create_task_group() as group:
                with sup.starting_batch():
                    for i in range(2):
                        group.start_soon(sup.call, "bad-worker", request(f"echo:{i}"))
                    await anyio.sleep(0)  # both tasks send their request without polling
                    batch = polls["n"]
            return alone, batch

    alone, batch = run(go)
    assert alone > 0 and batch == 0
