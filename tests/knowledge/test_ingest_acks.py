"""Ingest cannot half-land: the index ledger (kernel/index_ledger.py) and its repair (kernel/reindex.py).

A real kernel (tests/support/ingest_plugins/ack_kill_driver.py, the built-in plugins) is SIGKILLed at several
points of an ingest; then a plain re-ingest of the same text (and, separately, just opening a kernel)
must leave every kb-plugin's index holding the source, so a question whose answer is only in that
source is answered. Before the ledger, a kill between the commit and the kb-plugins' notification left
a KB the store listed but no index held, and the re-ingest said "unchanged" and did nothing.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mrpvm.kernel.context import KernelContext
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import DB_NAME, Store
from mrpvm.kernel.store_rows import MIGRATIONS, text_hash
from mrpvm.knowledge import index_ledger as ledger
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source, normalize_text, remove_source
from mrpvm.knowledge.reindex import check_kb, reoffer
from mrpvm.protocol.envelope import NormalizePayload
from supervisor_support import processes_with

DRIVER = Path(__file__).resolve().parents[1] / "support" / "ingest_plugins" / "ack_kill_driver.py"
ENABLED = "sd-symbolic,planner-default,kb-fast,kb-balanced,gs-symbolic"
KB_PLUGINS = ["kb-balanced", "kb-fast"]
FILLER = "\n\n".join(
    f"## Archive {i}\n\nThe archive module number {i} stores old reports for the audit team every quarter."
    for i in range(40)
)
TEXT = FILLER + "\n\n## Telemetry\n\nThe Zorblax relay sends its telemetry on port 7431.\n"
QUESTION = "Which port does the Zorblax relay use for telemetry?"
FACT = "7431"


def kernel(home: Path, work, *, repair: bool = False):
    async def main():
        env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS=ENABLED)
        ctx = await open_context(env, repair_indexes=repair)
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()

    return anyio.run(main)


UNIT_ID = re.compile(r"`[^`\s]*::[^`\s]*`")


async def answer(ctx: KernelContext) -> str:
    """The turn's Markdown without its unit ids: an id's hash may spell any figure a test says is gone."""
    result = await run_turn(ctx, TurnRequest(message=QUESTION, kb="docs"))
    return UNIT_ID.sub("`unit`", result.response_markdown)


def kill_at(home: Path, point: str, text: str = TEXT) -> None:
    source = home.parent / "relay.md"
    source.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(DRIVER.parent.parent))
    proc = subprocess.Popen(
        [sys.executable, "-u", str(DRIVER), str(home), str(source), point],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.strip() == f"at {point}", line
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    end = time.monotonic() + 5
    while processes_with(str(home)) and time.monotonic() < end:
        time.sleep(0.05)
    assert processes_with(str(home)) == []  # no plugin outlived its kernel


@pytest.mark.parametrize(
    ("point", "owed"),
    [("normalizing", None), ("committed", KB_PLUGINS), ("acked-one", 1), ("done", [])],
)
def test_kill_9_mid_ingest_then_a_plain_reingest_answers_from_the_source(tmp_path, point, owed):
    home = tmp_path / "home"
    kill_at(home, point)

    async def work(ctx):
        before = await check_kb(ctx, "docs", repair=False) if ctx.store.find_kb("docs") else None
        kb = ctx.store.find_kb("docs") or ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "relay.md", TEXT)
        after = await check_kb(ctx, "docs", repair=False)
        return before, result, after, await answer(ctx)

    before, result, after, text = kernel(home, work)
    if owed is None:  # killed before the commit: nothing stored, the re-ingest is a full one
        assert before is None or before.sources == []
        assert not result.unchanged and result.notified == KB_PLUGINS
    else:
        (state,) = before.sources
        assert state.storedUnits == state.unitCount > 0 and before.problems == []
        missing = state.missing
        if isinstance(owed, int):
            assert len(missing) == owed and set(missing) < set(KB_PLUGINS)
        else:
            assert missing == owed
        assert result.unchanged and result.notified == missing  # only what was owed, offered again
    assert after.ok and after.sources[0].acknowledged == KB_PLUGINS
    assert FACT in text


def test_opening_a_kernel_repairs_what_a_killed_ingest_left_owed(tmp_path):
    home = tmp_path / "home"
    kill_at(home, "committed")

    async def work(ctx):
        return await check_kb(ctx, "docs", repair=False), await answer(ctx)

    after, text = kernel(home, work, repair=True)
    assert after.ok and after.sources[0].acknowledged == KB_PLUGINS and FACT in text


def test_reoffering_reports_what_a_killed_ingest_left_owed(tmp_path):
    home = tmp_path / "home"
    kill_at(home, "committed")

    async def work(ctx):
        return await reoffer(ctx), await check_kb(ctx, "docs", repair=False)

    report, after = kernel(home, work)
    assert report.offered == ["docs/relay.md -> kb-balanced, kb-fast"] and report.warnings == []
    assert after.ok


async def _store_without_notifying(ctx: KernelContext) -> SourceRecord:
    """What a kernel killed right after the commit leaves: the source stored, no index told."""
    kb = ctx.store.create_kb("docs")
    source_id = ctx.store.source_id_for(kb.id, "relay.md")
    payload = NormalizePayload(sourceId=source_id, sourceName="relay.md", text=TEXT, scope="kb")
    units, _, _ = await normalize_text(ctx, "sd-symbolic", payload)
    record = SourceRecord(id=source_id, kbId=kb.id, name="relay.md", hash=text_hash(TEXT), bytes=len(TEXT))
    return ctx.store.replace_source(kb.id, record, units)


def test_a_source_no_index_acknowledged_is_not_answered_until_repaired(tmp_path):
    """The failure the ledger fixes, shown in one kernel: stored but not indexed, then check_kb."""

    async def work(ctx):
        await _store_without_notifying(ctx)
        unrepaired = await answer(ctx)
        report = await check_kb(ctx, "docs")
        return unrepaired, report, await answer(ctx)

    unrepaired, report, repaired = kernel(tmp_path / "home", work)
    assert FACT not in unrepaired
    assert report.sources[0].missing == KB_PLUGINS and report.ok
    assert report.repaired is not None and report.repaired.offered == [
        "docs/relay.md -> kb-balanced, kb-fast"
    ]
    assert FACT in repaired


def test_a_removal_stays_owed_until_acknowledged(tmp_path):
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "relay.md", TEXT)
        assert FACT in await answer(ctx)
        # killed right after the removal's commit: the store forgot the source, the indexes did not
        ctx.store.remove_source(kb.id, "relay.md", pending_for=KB_PLUGINS)
        owed = await check_kb(ctx, "docs", repair=False)
        stale = await answer(ctx)
        repaired = await check_kb(ctx, "docs")
        return owed, stale, repaired, await answer(ctx)

    owed, stale, repaired, text = kernel(tmp_path / "home", work)
    assert [(r.sourceName, r.plugins) for r in owed.pendingRemovals] == [("relay.md", KB_PLUGINS)]
    assert not owed.ok and FACT in stale  # the indexes still serve the removed source
    assert repaired.ok and repaired.repaired.removed == ["docs/relay.md -> kb-balanced, kb-fast"]
    assert FACT not in text


def test_remove_source_acknowledged_at_once_owes_nothing(tmp_path):
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "relay.md", TEXT)
        _, warnings = await remove_source(ctx, kb, "relay.md")
        return warnings, await check_kb(ctx, "docs", repair=False)

    warnings, report = kernel(tmp_path / "home", work)
    assert warnings == [] and report.ok and report.pendingRemovals == []


def test_a_failing_kb_plugin_stays_owed_and_check_reports_it(tmp_path):
    plugins = Path(__file__).resolve().parents[1] / "support" / "ingest_plugins"

    async def main():
        env = dict(os.environ, MRPVM_HOME=str(tmp_path), MRPVM_ENABLED_PLUGINS="test-sd,test-kb,test-kb-fail")
        ctx = await open_context(env, manifests_dir=plugins)
        try:
            kb = ctx.store.create_kb("docs")
            first = await ingest_source(
                ctx, kb, "doc.md", "One fact here. Another fact there.\n", sd_plugin="test-sd"
            )
            again = await ingest_source(
                ctx, kb, "doc.md", "One fact here. Another fact there.\n", sd_plugin="test-sd"
            )
            return first, again, await check_kb(ctx, "docs")
        finally:
            await ctx.aclose()

    first, again, report = anyio.run(main)
    assert first.notified == ["test-kb"] and any("test-kb-fail" in w for w in first.warnings)
    assert again.unchanged and again.notified == [] and any("test-kb-fail" in w for w in again.warnings)
    assert report.sources[0].acknowledged == ["test-kb"] and report.sources[0].missing == ["test-kb-fail"]
    assert not report.ok and any("scripted index failure" in w for w in report.repaired.warnings)
    assert report.repaired.offered == ["docs/doc.md -> none acknowledged"]


def test_check_full_reindexes_every_source(tmp_path):
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "relay.md", TEXT)
        return await check_kb(ctx, "docs", full=True)

    report = kernel(tmp_path / "home", work)
    assert report.sources[0].missing == [] and report.ok
    assert report.repaired.offered == ["docs/relay.md -> kb-balanced, kb-fast"]


def test_a_database_from_before_the_ledger_is_indexed_only_where_the_index_is(tmp_path):
    path = tmp_path / DB_NAME
    with sqlite3.connect(path) as conn:  # a schema-2 database with one KB and one source
        for statement in MIGRATIONS[0] + MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 2")
        conn.execute("INSERT INTO kbs VALUES ('kb_1', 'docs', 'now')")
        conn.execute(
            "INSERT INTO sources (id, kb_id, name, hash, ingested_at) VALUES ('s-1', 'kb_1', 'a.md', 'h1', 't')"
        )
    with Store(path, node_id="copy") as copy:  # a node without the index (its artifacts are elsewhere)
        assert ledger.acknowledgements(copy, "kb_1") == {}
        assert ledger.adopt_legacy(copy, KB_PLUGINS, lambda kb, plugin: False) == 0
        (owed,) = ledger.pending_sources(copy, KB_PLUGINS)
        assert owed.missing == KB_PLUGINS
    with Store(path, node_id="here") as store:  # the node whose artifact folders hold every index
        assert ledger.adopt_legacy(store, KB_PLUGINS, lambda kb, plugin: kb == "kb_1") == len(KB_PLUGINS)
        assert ledger.acknowledgements(store, "kb_1") == {"s-1": dict.fromkeys(KB_PLUGINS, "h1")}
        assert ledger.pending_sources(store, KB_PLUGINS) == []
        store.replace_source("kb_1", SourceRecord(id="s-1", kbId="kb_1", name="a.md", hash="h2"), [])
        (pending,) = ledger.pending_sources(store, KB_PLUGINS)  # a new version is owed again
        assert pending.missing == KB_PLUGINS and pending.source.hash == "h2"
