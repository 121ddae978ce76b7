"""`Supervisor.prestart`: a turn starts one worker of the kb- and gs-plugins its plan is about to call, while
earlier stages run; the call then finds it idle. Nothing else starts (a full pool, a one-shot plugin, an
unknown one, a shut-down supervisor), and failures stay the call's to report. Before any call the
supervisor binds to the running loop first, as a call would."""

from __future__ import annotations

from mrpvm.kernel.registry import Registry
from supervisor_support import new_supervisor, request, run


def test_prestart_starts_one_worker_that_the_next_call_uses(registry: Registry) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            await sup.call("echo-oneshot", request("x"))  # the turn's earlier stages: the loop is bound
            started = sup.prestart("echo-worker")
            pids = set(sup.pids())
            again = sup.prestart("echo-worker")
            answer = (await sup.call("echo-worker", request("echo:hi"))).document.answer
            health = sup.health()["echo-worker"]
            others = (sup.prestart("echo-oneshot"), sup.prestart("no-such-plugin"))
            return started, pids, again, answer, health, set(sup.pids()), others

    started, pids, again, answer, health, after, others = run(go)
    assert started is True and len(pids) == 1 and again is False
    assert answer == "You asked: echo:hi"
    assert health["spawns"] == 1 and after == pids  # the call used the prestarted worker
    assert others == (False, False)


def test_prestart_before_any_call_binds_the_loop_and_after_shutdown_starts_nothing(
    registry: Registry,
) -> None:
    async def go():
        sup = new_supervisor(registry)
        unknown = sup.prestart("no-such-plugin")
        before = sup.prestart("echo-worker")  # a one-turn process starts its workers before its first call
        pids = set(sup.pids())
        answer = (await sup.call("echo-worker", request("echo:hi"))).document.answer
        spawns = sup.health()["echo-worker"]["spawns"]
        await sup.aclose()
        return unknown, before, pids, answer, spawns, sup.prestart("echo-worker"), sup.pids()

    unknown, before, pids, answer, spawns, after_close, left = run(go)
    assert unknown is False and before is True and len(pids) == 1
    assert answer == "You asked: echo:hi" and spawns == 1  # the call used the worker started first
    assert after_close is False and left == []
