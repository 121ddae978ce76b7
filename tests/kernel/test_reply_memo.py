"""A pure gs-plugin's reply kept by request content: an identical request is answered without a call."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import msgspec
import pytest
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor.reply_memo import ReplyMemo, memo_key
from mrpvm.protocol.envelope import Budget
from supervisor_support import PLUGINS, manifest, new_supervisor, request, run


@pytest.fixture(scope="module")
def memo_registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    folder = tmp_path_factory.mktemp("memo-plugins")
    shutil.copy(PLUGINS / "misbehave.py", folder / "misbehave.py")
    for data in (
        manifest("pure-worker", "misbehave.py", worker=True, pure=True),
        manifest("plain-worker", "misbehave.py", worker=True),
        manifest("pure-oneshot", "misbehave.py", worker=False, pure=True),
    ):
        (folder / f"{data['id']}.json").write_text(json.dumps(data))
    registry = Registry.load(folder)
    assert not registry.rejected, registry.rejected
    return registry


def ran(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_an_identical_request_to_a_pure_worker_is_answered_from_its_kept_reply(memo_registry, tmp_path):
    """Ids, deadline and session differ between the calls; prompt, context and payload do not: the plugin
    runs once, and the second result is the first reply (its Request: is the first call's id)."""
    log = tmp_path / "ran"

    async def go():
        async with new_supervisor(memo_registry) as sup:
            first = await sup.call("pure-worker", request(f"tick:{log}"))
            again = msgspec.structs.replace(
                request(f"tick:{log}"),
                requestId="req-2",
                sessionId="ses-2",
                frameId="f-2",
                budget=Budget(deadlineMs=4000),
            )
            second = await sup.call("pure-worker", again)
            other = await sup.call("pure-worker", request(f"tick:{log}", items=3))
            assert sup.health()["pure-worker"]["memoHits"] == 1
            return first, second, other

    first, second, other = run(go)
    assert ran(log) == 2  # the first request and the one with other context; not the repeat
    assert (first.mode, second.mode, other.mode) == ("worker", "memo", "worker")
    assert second.document == first.document
    assert second.document.result.request == first.document.result.request


@pytest.mark.parametrize("plugin", ["plain-worker", "pure-oneshot"])
def test_a_plugin_not_declared_pure_or_not_a_worker_runs_every_call(memo_registry, tmp_path, plugin):
    log = tmp_path / "ran"

    async def go():
        async with new_supervisor(memo_registry) as sup:
            return [(await sup.call(plugin, request(f"tick:{log}"))).mode for _ in range(3)]

    modes = run(go)
    assert ran(log) == 3
    assert "memo" not in modes


def test_an_error_reply_is_never_kept(memo_registry, tmp_path):
    log = tmp_path / "ran"

    async def go():
        async with new_supervisor(memo_registry) as sup:
            return [await sup.call("pure-worker", request(f"tick:{log}|error")) for _ in range(2)]

    results = run(go)
    assert ran(log) == 2
    assert [r.document.result.status for r in results] == ["error", "error"]
    assert [r.mode for r in results] == ["worker", "worker"]


def test_the_key_ignores_ids_budget_and_llm_but_not_content():
    base = request("What is a widget?")
    same = msgspec.structs.replace(
        base, requestId="r", sessionId="s", frameId="f", id=7, budget=Budget(llmCalls=3)
    )
    assert memo_key(base) == memo_key(same)
    assert memo_key(base) != memo_key(request("What is a gadget?"))
    assert memo_key(base) != memo_key(request("What is a widget?", items=1))
    assert memo_key(base) != memo_key(msgspec.structs.replace(base, payload={"intent": {"intent": "x"}}))


def test_the_memo_is_bounded_by_entries_and_bytes():
    memo = ReplyMemo(max_entries=3, max_bytes=80)
    for i in range(5):
        memo.put(b"k%d" % i, b"x" * 8)
    assert len(memo) == 3 and memo.get(b"k0") is None and memo.get(b"k4") == b"x" * 8
    memo.put(b"big", b"y" * 11)  # more than an eighth of the bytes: not kept
    assert memo.get(b"big") is None
    memo.get(b"k2")  # used: k3 is now the oldest
    for i in range(5, 7):
        memo.put(b"k%d" % i, b"z" * 9)
    assert memo.get(b"k2") is not None and memo.get(b"k3") is None


def test_the_key_names_the_artifacts_folder_but_ignores_what_the_plugin_keeps_in_it(tmp_path):
    """A pure plugin's own speed memo in its artifacts folder (files it rewrites every call) leaves the key
    alone; another folder (another KB) is another key."""
    from mrpvm.protocol.envelope import Paths

    folder = tmp_path / "art"
    folder.mkdir()
    req = msgspec.structs.replace(request("What is a widget?"), paths=Paths(artifacts=str(folder)))
    first = memo_key(req)
    (folder / "kept-vectors.bin").write_bytes(b"written by the plugin during the call")
    assert memo_key(req) == first
    other = msgspec.structs.replace(req, paths=Paths(artifacts=str(tmp_path / "other")))
    assert memo_key(other) != first


def test_identical_requests_in_flight_at_once_are_one_call(memo_registry, tmp_path):
    """Three sessions ask the same question together (a busy daemon's first solve over new evidence): the
    plugin runs once, the other two callers get its reply; a different request still runs."""
    log = tmp_path / "ran"

    async def go():
        async with new_supervisor(memo_registry) as sup:
            same = [
                msgspec.structs.replace(request(f"tick:{log}"), requestId=f"req-{i}", sessionId=f"ses-{i}")
                for i in range(3)
            ]
            results = await asyncio.gather(
                *(sup.call("pure-worker", r) for r in same),
                sup.call("pure-worker", request(f"tick:{log}", 3)),
            )
            return results, sup.health()["pure-worker"]["memoHits"]

    results, hits = run(go)
    assert ran(log) == 2  # the three identical requests once, the other one once
    assert sorted(r.mode for r in results[:3]) == ["memo", "memo", "worker"]
    assert results[3].mode == "worker"
    assert all(r.document == results[0].document for r in results[:3])
    assert hits == 2


def test_callers_that_joined_a_call_whose_reply_was_not_kept_each_call(memo_registry, tmp_path):
    """An error reply is never kept, so callers that waited on it are not handed it: each runs its own call."""
    log = tmp_path / "ran"

    async def go():
        async with new_supervisor(memo_registry) as sup:
            calls = (sup.call("pure-worker", request(f"tick:{log}|error")) for _ in range(3))
            return await asyncio.gather(*calls)

    results = run(go)
    assert ran(log) == 3
    assert [r.mode for r in results] == ["worker"] * 3
    assert [r.document.result.status for r in results] == ["error"] * 3


def test_a_joined_caller_whose_deadline_passes_first_calls_itself():
    """`join` waits no longer than the caller's own deadline; the leader lands its reply for later joiners."""
    memo = ReplyMemo()

    async def go():
        assert await memo.join(b"k", 1.0) is None  # nothing in flight
        assert memo.lead(b"k") and not memo.lead(b"k")
        assert await memo.join(b"k", 0.01) is None  # the leader has not landed
        waiter = asyncio.ensure_future(memo.join(b"k", 60.0))
        await asyncio.sleep(0)
        memo.put(b"k", b"reply")
        memo.land(b"k")
        return await waiter

    assert asyncio.run(go()) == b"reply"
    assert memo.hits == 1
