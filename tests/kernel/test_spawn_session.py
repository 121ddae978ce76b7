"""How plugin processes are started (early_launch.start_process): each in a process group of its own
(pgid = pid, so `killpg` ends it and what it started) and out of the kernel's session; a sandboxed one's
bubblewrap is only given its group (no `setsid` in the kernel's vfork child), because bwrap's
`--new-session` puts the plugin in a session of its own.

Needs bubblewrap (as test_sandbox.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import early_launch
from supervisor_support import build_registry, new_supervisor, request, run, sandboxed_supervisor


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        for task in os.listdir(f"/proc/{current}/task"):
            children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            found += [int(c) for c in children]
            todo += [int(c) for c in children]
    return found


def sessions_of(sandboxed: bool, registry: Registry) -> list[tuple[int, int, int, list[int]]]:
    """(pid, pgid, sid, the sids of its descendants) of each worker and one-shot the supervisor runs."""

    async def go() -> list[tuple[int, int, int, list[int]]]:
        make = sandboxed_supervisor if sandboxed else new_supervisor
        async with make(registry) as sup:
            await sup.call("echo-worker", request("hello"))
            pids = sup.pids()
            return [(p, os.getpgid(p), os.getsid(p), [os.getsid(d) for d in descendants(p)]) for p in pids]

    return run(go, limit_s=60)


def test_a_sandboxed_worker_has_its_group_and_its_plugin_a_session_of_its_own(registry):
    kernel_sid = os.getsid(0)
    seen = sessions_of(True, registry)
    assert seen
    for pid, pgid, sid, inner in seen:
        assert pgid == pid  # killpg(pid) reaches it and all it started
        assert sid == kernel_sid  # no setsid in the spawn: bwrap was only given a group of its own
        assert any(s != kernel_sid for s in inner)  # the plugin: the session bwrap's --new-session made


def test_an_unsandboxed_worker_starts_a_session_of_its_own(registry):
    seen = sessions_of(False, registry)
    assert seen and all(pgid == pid and sid == pid for pid, pgid, sid, _ in seen)


def test_an_early_launch_still_starts_a_session(tmp_path):
    """early_launch's workers start before any other thread runs, where setsid costs nothing."""
    popen = early_launch.start_process(["sleep", "30"], tmp_path, {})
    try:
        assert os.getsid(popen.pid) == popen.pid
    finally:
        popen.kill()
        popen.wait()
