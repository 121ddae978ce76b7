"""The kb-plugins index a new version while the store commits it (knowledge/in_flight.py): nothing the
store committed is lost, and no index is vouched for that holds what the store does not.

- A real kernel SIGKILLed after every kb-plugin indexed version 2 but before its commit: the indexes hold
  version 2, the store version 1; opening a kernel (or a plain re-ingest of version 1) drops version 2
  from every index and indexes version 1 again, so the question gets version 1's answer.
- A commit that fails: the ingest fails, the indexes are taken back to the stored version at once.
- The held removals themselves, on SQLite and PostgreSQL: not owed while their holder runs, owed once
  it is gone, settled by the commit, released when the commit fails.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mrpvm.kernel import holder
from mrpvm.kernel.errors import StoreError
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store
from mrpvm.kernel.store_rows import text_hash
from mrpvm.knowledge import index_ledger as ledger
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.knowledge.reindex import check_kb
from test_ingest_acks import FACT, KB_PLUGINS, TEXT, answer, kernel, kill_at

NEW_FACT = "9455"
TEXT_2 = TEXT.replace(FACT, NEW_FACT)


def _ingest_v1(home) -> None:
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "relay.md", TEXT)
        assert result.notified == KB_PLUGINS, result.warnings
        return await answer(ctx)

    assert FACT in kernel(home, work)


def test_killed_after_indexing_before_the_commit_then_a_kernel_opens(tmp_path):
    home = tmp_path / "home"
    _ingest_v1(home)
    kill_at(home, "indexed", TEXT_2)

    async def unrepaired(ctx):  # what the kill left: version 2 indexed, version 1 stored, owed both ways
        return await check_kb(ctx, "docs", repair=False), await answer(ctx)

    before, stale = kernel(home, unrepaired)
    assert NEW_FACT in stale  # the indexes served a version the store never committed
    assert [(r.sourceName, r.plugins) for r in before.pendingRemovals] == [("relay.md", KB_PLUGINS)]
    (state,) = before.sources
    assert state.missing == KB_PLUGINS and state.hash == text_hash(TEXT) and not before.ok

    async def opened(ctx):
        return await check_kb(ctx, "docs", repair=False), await answer(ctx)

    after, text = kernel(home, opened, repair=True)
    assert after.ok and after.pendingRemovals == [] and after.sources[0].acknowledged == KB_PLUGINS
    assert FACT in text and NEW_FACT not in text


@pytest.mark.parametrize(("text", "fact", "gone"), [(TEXT, FACT, NEW_FACT), (TEXT_2, NEW_FACT, FACT)])
def test_killed_after_indexing_then_a_plain_reingest(tmp_path, text, fact, gone):
    """Version 1 again (unchanged for the store) or version 2 again (a full ingest)."""
    home = tmp_path / "home"
    _ingest_v1(home)
    kill_at(home, "indexed", TEXT_2)

    async def again(ctx):
        result = await ingest_source(ctx, ctx.store.get_kb("docs"), "relay.md", text)
        return result, await check_kb(ctx, "docs", repair=False), await answer(ctx)

    result, after, said = kernel(home, again)
    assert result.unchanged == (text == TEXT) and result.notified == KB_PLUGINS
    assert after.ok and after.pendingRemovals == [] and after.sources[0].acknowledged == KB_PLUGINS
    assert fact in said and gone not in said


def test_a_failed_commit_takes_the_indexes_back(tmp_path):
    home = tmp_path / "home"
    _ingest_v1(home)

    async def work(ctx):
        def broken(*args, **kwargs):
            raise StoreError("the disk said no")

        ctx.store.replace_source = broken  # type: ignore[method-assign]
        kb = ctx.store.get_kb("docs")
        with pytest.raises(StoreError, match="the disk said no"):
            await ingest_source(ctx, kb, "relay.md", TEXT_2)
        return await check_kb(ctx, "docs", repair=False), await answer(ctx)

    after, text = kernel(home, work)
    assert after.ok and after.pendingRemovals == [] and after.sources[0].acknowledged == KB_PLUGINS
    assert FACT in text and NEW_FACT not in text


def _dead_holder() -> str:
    """A holder whose process has ended (a real one: a child that exits)."""
    out = subprocess.run(
        [sys.executable, "-c", "from mrpvm.kernel.holder import this_process; print(this_process())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_held_removals_on_both_backends(tmp_path, store_env):
    store = Store.open(tmp_path, store_env)
    try:
        store.register_node()
        kb = store.create_kb("docs")
        v1 = store.replace_source(kb.id, SourceRecord(id="s-1", kbId=kb.id, name="s.md", hash="h1"), [])
        assert ledger.record_ack(store, v1, "kb-fast")
        me = holder.this_process()
        assert holder.alive(me) and not holder.alive(_dead_holder()) and not holder.alive(None)

        store.hold_removals(kb.id, "s-1", "s.md", ["kb-fast"], me)
        assert ledger.pending_removals(store, ["kb-fast"]) == []  # the holder runs: not owed yet
        (owed,) = ledger.pending_sources(store, ["kb-fast"])  # the stored version's ack is gone
        assert owed.source.hash == "h1"
        v2 = store.replace_source(
            kb.id, SourceRecord(id="s-1", kbId=kb.id, name="s.md", hash="h2"), [], holder=me
        )
        assert store.owed_removals() == []  # the commit settled the hold
        assert ledger.record_ack(store, v2, "kb-fast") and ledger.pending_sources(store, ["kb-fast"]) == []

        store.hold_removals(kb.id, "s-1", "s.md", ["kb-fast"], me)
        store.release_removals("s-1", me)  # a commit that failed: owed like any other
        (removal,) = ledger.pending_removals(store, ["kb-fast"])
        assert removal.sourceId == "s-1" and removal.plugins == ["kb-fast"]
        ledger.record_removal_ack(store, "s-1", "kb-fast")
        assert (
            store.owed_removals() == [] and ledger.pending_sources(store, ["kb-fast"])[0].source.hash == "h2"
        )

        store.hold_removals(kb.id, "s-1", "s.md", ["kb-fast"], _dead_holder())  # its holder was killed
        assert [r.sourceId for r in ledger.pending_removals(store, ["kb-fast"])] == ["s-1"]
        store.hold_removals(kb.id, "s-1", "s.md", ["kb-fast"], me)  # a new ingest takes the marker over
        assert ledger.pending_removals(store, ["kb-fast"]) == []
        store.remove_source(kb.id, "s-1", ["kb-fast"])  # a real removal is owed whatever was held
        assert [r.sourceId for r in ledger.pending_removals(store, ["kb-fast"])] == ["s-1"]
    finally:
        store.close()


def test_a_holder_from_another_boot_or_malformed_is_not_alive():
    boot, pid, started = holder.this_process().split(":")
    assert not holder.alive(f"another-boot:{pid}:{started}")
    assert not holder.alive(f"{boot}:{pid}:{int(started) + 1}" if started.isdigit() else "x")
    assert not holder.alive("garbage") and not holder.alive(f"{boot}:x:{started}")
    assert holder.alive(f"{boot}:{os.getpid()}:{started}")


def test_a_running_ingest_s_hold_is_not_paid_by_another_process(tmp_path):
    """Another process on the same node (a CLI command opening) sees the hold of a live ingest and leaves
    it; the marker is this test process's, the reader a fresh interpreter."""
    store = Store.open(tmp_path)
    try:
        kb = store.create_kb("docs")
        store.replace_source(kb.id, SourceRecord(id="s-1", kbId=kb.id, name="s.md", hash="h1"), [])
        store.hold_removals(kb.id, "s-1", "s.md", ["kb-fast"], holder.this_process())
    finally:
        store.close()
    code = (
        "import sys; from mrpvm.kernel.store import Store; from mrpvm.knowledge import index_ledger as l;"
        f"s = Store.open({str(tmp_path)!r}); print(len(l.pending_removals(s, ['kb-fast']))); s.close()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
