"""Supervisor, one-shot mode (DS016): stdin JSON, EOF, stdout CNL, exit codes 0/1/2/3 and the stderr JSON line."""

from __future__ import annotations

import anyio
import pytest
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import (
    CRASHED,
    INVALID_CNL,
    OUTPUT_TOO_LARGE,
    PLUGIN_ERROR,
    PLUGIN_INVALID_INPUT,
    TIMEOUT,
)
from supervisor_support import (
    MAX_OUTPUT,
    answer_json,
    error_of,
    new_supervisor,
    request,
    run,
    wait_gone,
)


def test_sdk_plugin_one_shot_answers(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            result = await sup.call("echo-oneshot", request("what is it?", items=3))
            return result, sup.pids()

    result, pids = run(go)
    assert result.mode == "one-shot"
    assert result.document.answer == "You asked: what is it?"
    assert result.document.sources == ["t0", "t1", "t2"]
    assert result.document.result.request is None  # one-shot requests carry no frame id
    assert pids == []  # the process is reaped when the call returns


def test_each_one_shot_call_is_a_new_process(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            return [answer_json(await sup.call("bad-oneshot", request("pid")))["pid"] for _ in range(3)]

    pids = run(go)
    assert len(set(pids)) == 3


@pytest.mark.parametrize(
    ("prompt", "code", "plugin_code", "exit_code"),
    [
        ("stderr-exit:1,json", PLUGIN_ERROR, "PLUGIN_SAID", 1),
        ("stderr-exit:1,plain", PLUGIN_ERROR, None, 1),
        ("stderr-exit:2,json", PLUGIN_INVALID_INPUT, "PLUGIN_SAID", 2),
        ("stderr-exit:2,plain", PLUGIN_INVALID_INPUT, None, 2),
        ("stderr-exit:3,json", TIMEOUT, "PLUGIN_SAID", 3),
        ("stderr-exit:9,json", CRASHED, None, 9),
    ],
)
def test_non_zero_exit_with_and_without_stderr_json(
    registry: Registry, prompt: str, code: str, plugin_code: str | None, exit_code: int
) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            return await error_of(sup.call("bad-oneshot", request(prompt)))

    err = run(go).error
    assert err.code == code
    assert err.exitCode == exit_code
    assert err.details.get("pluginCode") == plugin_code
    if plugin_code:
        assert "explained" in err.message
    elif code != CRASHED:
        assert "without an error line" in err.message
        assert "something went wrong" in err.stderrTail


def test_crash_by_signal(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            return await error_of(sup.call("bad-oneshot", request("self-kill")))

    err = run(go).error
    assert err.code == CRASHED
    assert err.exitCode == -9
    assert "signal 9" in err.message


def test_hang_past_deadline_is_killed(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            seen: set[int] = set()

            async def watch() -> None:  # the pid from the supervisor: the process may be killed before
                while True:  # it got to run any of its own code on a loaded machine
                    seen.update(sup.pids())
                    await anyio.sleep(0.005)

            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                err = await error_of(sup.call("bad-oneshot", request("hang"), timeout_s=0.5))
                tg.cancel_scope.cancel()
            return err, seen, [await wait_gone(pid) for pid in seen], sup.pids()

    err, seen, gone, pids = run(go)
    assert err.error.code == TIMEOUT
    assert len(seen) == 1 and gone == [True]
    assert not err.error.details.get("reportedByPlugin")  # the kernel killed it
    assert pids == []


def test_garbage_output_is_invalid_cnl(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            return await error_of(sup.call("bad-oneshot", request("garbage")))

    err = run(go).error
    assert err.code == INVALID_CNL
    assert err.details["issues"][0]["rule"] == "content-outside-section"
    assert err.details["issues"][0]["line"] == 1


def test_invalid_cnl_names_line_and_rule(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            return await error_of(sup.call("bad-oneshot", request("badcnl")))

    err = run(go).error
    assert err.code == INVALID_CNL
    assert (err.details["issues"][0]["line"], err.details["issues"][0]["rule"]) == (2, "enum")


def test_output_over_the_cap(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            over = await error_of(sup.call("bad-oneshot", request(f"big:{MAX_OUTPUT * 3}")))
            under = await sup.call("bad-oneshot", request(f"big:{MAX_OUTPUT // 2}"))
            return over, under

    over, under = run(go)
    assert over.error.code == OUTPUT_TOO_LARGE
    assert len(under.document.answer or "") == MAX_OUTPUT // 2


def test_grandchildren_of_a_one_shot_are_killed_when_it_exits(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            info = answer_json(await sup.call("bad-oneshot", request("spawn-child")))
            return info, await wait_gone(info["child"])

    info, gone = run(go)
    assert info["child"] != info["pid"]
    assert gone, "the plugin's background child survived it"
