"""A kb-plugin's index format changes (knowledge/index_format.py): every KB's index rebuilds itself.

The upgrade is simulated as it happens: an index built by the built-in kb-plugins (real subprocesses, real
SQLite), then turned into one an older plugin wrote (its `meta` format and the kernel's marker moved back to
format 3), then a kernel opens with today's manifests (indexFormat kb_common-4). Before this change every
question was refused (ArtifactError) until the artifact folders were removed by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
from cli_support import cli_env, mrpvm
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.context import KernelContext
from mrpvm.knowledge import index_format
from mrpvm.knowledge import index_ledger as ledger
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.knowledge.reindex import check_kb
from mrpvm.plugins.kb_common.store import FORMAT_VERSION
from test_ingest_acks import ENABLED, FACT, KB_PLUGINS, QUESTION, TEXT, answer

OLD = "kb_common-3"


def kernel(home: Path, work, *, repair: bool = True, manifests: Path | None = None):
    async def main():
        env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS=ENABLED)
        ctx = await open_context(env, repair_indexes=repair, manifests_dir=manifests)
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()

    return anyio.run(main)


def ingested(home: Path) -> str:
    async def work(ctx: KernelContext) -> str:
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "relay.md", TEXT)
        assert FACT in await answer(ctx)
        return kb.id

    return kernel(home, work)


def make_old(home: Path, kb_id: str, plugins: list[str] = KB_PLUGINS) -> None:
    """What an older kb_common left: its SQLite says format 3, and so does the kernel's marker."""
    for plugin in plugins:
        folder = home / "artifacts" / kb_id / plugin
        with sqlite3.connect(folder / "units.sqlite") as db:
            db.execute("UPDATE meta SET value='3' WHERE name='format'")
        assert folder.with_name(f"{plugin}.format").read_text() == f"kb_common-{FORMAT_VERSION}"
        folder.with_name(f"{plugin}.format").write_text(OLD)


def state(home: Path, manifests: Path | None = None) -> dict:
    """Answer and check without any repair at open (as `mrpvm kb check --no-repair`)."""

    async def work(ctx: KernelContext) -> dict:
        report = await check_kb(ctx, "docs", repair=False)
        return {"answer": await answer(ctx), "check": report}

    return kernel(home, work, repair=False, manifests=manifests)


def assert_rebuilt(home: Path, kb_id: str) -> None:
    async def work(ctx: KernelContext) -> None:
        assert FACT in await answer(ctx)
        report = await check_kb(ctx, "docs")
        assert report.ok and report.staleIndexes == [] and report.repaired.rebuilt == []
        (source,) = report.sources
        assert source.acknowledged == KB_PLUGINS and source.storedUnits == source.unitCount > 0
        for plugin in KB_PLUGINS:
            assert index_format.recorded(ctx, kb_id, plugin) == f"kb_common-{FORMAT_VERSION}"

    kernel(home, work)


def test_the_manifests_declare_the_format_kb_common_writes():
    for plugin in ("kb-fast", "kb-balanced", "kb-thinkingdb"):
        manifest = json.loads((MANIFESTS_DIR / f"{plugin}.json").read_text())
        assert manifest["indexFormat"] == f"kb_common-{FORMAT_VERSION}", plugin


def test_a_changed_format_rebuilds_every_index_when_a_kernel_opens(tmp_path):
    home = tmp_path / "home"
    kb_id = ingested(home)
    make_old(home, kb_id)
    before = state(home)
    assert FACT not in before["answer"]  # the old index cannot be read
    check = before["check"]
    assert not check.ok and sorted(s.split(" -> ")[1].split(":")[0] for s in check.staleIndexes) == KB_PLUGINS
    assert "'kb_common-3', the plugin writes 'kb_common-4'" in check.staleIndexes[0]

    async def opened(ctx: KernelContext) -> None:  # the open itself rebuilt the indexes
        assert FACT in await answer(ctx)

    kernel(home, opened)
    assert_rebuilt(home, kb_id)


def test_mrpvm_kb_check_reports_then_rebuilds_and_ask_answers(tmp_path):
    home = tmp_path / "home"
    kb_id = ingested(home)
    make_old(home, kb_id)
    env = cli_env(home) | {"MRPVM_ENABLED_PLUGINS": ENABLED}
    owed = mrpvm(env, "kb", "check", "docs", "--no-repair", "--json", timeout=120)
    report = json.loads(owed.stdout)
    assert owed.returncode == 1 and not report["ok"] and len(report["staleIndexes"]) == 2
    human = mrpvm(env, "kb", "check", "docs", timeout=120)
    out = human.stdout.decode()
    assert human.returncode == 0, out + human.stderr.decode()
    for plugin in KB_PLUGINS:
        assert f"index dropped to be rebuilt: docs -> {plugin}: index format 'kb_common-3'" in out
    assert "offered again: docs/relay.md -> kb-balanced, kb-fast" in out and "OK:" in out
    asked = mrpvm(env, "ask", QUESTION, "--kb", "docs", timeout=120)
    assert FACT in asked.stdout.decode()
    assert_rebuilt(home, kb_id)


def test_an_index_folder_removed_by_hand_is_rebuilt_not_reported_ok(tmp_path):
    home = tmp_path / "home"
    kb_id = ingested(home)
    shutil.rmtree(home / "artifacts" / kb_id / "kb-fast")
    check = state(home)["check"]
    gone = "docs -> kb-fast: its index folder is gone while sources are acknowledged"
    assert not check.ok and check.staleIndexes == [gone]
    assert_rebuilt(home, kb_id)


def test_a_plugin_that_declares_no_format_keeps_todays_behaviour(tmp_path):
    home = tmp_path / "home"
    manifests = tmp_path / "manifests"
    shutil.copytree(MANIFESTS_DIR, manifests)
    balanced = json.loads((manifests / "kb-balanced.json").read_text())
    del balanced["indexFormat"]
    (manifests / "kb-balanced.json").write_text(json.dumps(balanced))
    kb_id = ingested(home)
    make_old(home, kb_id)

    async def work(ctx: KernelContext) -> None:
        acked = ledger.acknowledgements(ctx.store, kb_id)
        (by_plugin,) = acked.values()
        assert sorted(by_plugin) == KB_PLUGINS  # kb-balanced's acknowledgement stays
        report = await check_kb(ctx, "docs", repair=False)
        assert report.ok and report.staleIndexes == []  # kb-fast rebuilt; kb-balanced not looked at
        assert index_format.recorded(ctx, kb_id, "kb-fast") == f"kb_common-{FORMAT_VERSION}"
        assert index_format.recorded(ctx, kb_id, "kb-balanced") == OLD  # its marker untouched
        with sqlite3.connect(ctx.artifacts_dir(kb_id, "kb-balanced") / "units.sqlite") as db:
            assert db.execute("SELECT value FROM meta WHERE name='format'").fetchone() == ("3",)
        with sqlite3.connect(ctx.artifacts_dir(kb_id, "kb-fast") / "units.sqlite") as db:
            assert db.execute("SELECT value FROM meta WHERE name='format'").fetchone() == (FORMAT_VERSION,)

    kernel(home, work, manifests=manifests)


KILLER = """
import os, signal, sys, anyio
from mrpvm.knowledge import {module} as target
from mrpvm.knowledge.context import open_context

def die(*args, **kwargs):
    print("killed", flush=True)
    os.killpg(0, signal.SIGKILL)

target.{name} = die

async def main():
    env = dict(os.environ, MRPVM_HOME=sys.argv[1], MRPVM_ENABLED_PLUGINS={enabled!r})
    await open_context(env)

anyio.run(main)
"""


def open_killed_at(home: Path, module: str, name: str) -> None:
    """A kernel opening, SIGKILLed (with its plugins) when the rebuild calls `module.name`."""
    script = KILLER.format(module=module, name=name, enabled=ENABLED)
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=120)
        assert out.strip() == "killed" and proc.returncode == -signal.SIGKILL, out
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_kernel_killed_mid_rebuild_leaves_what_the_next_open_finishes(tmp_path):
    for module, name in (("index_format", "_record"), ("index_ledger", "record_ack")):
        home = tmp_path / name
        kb_id = ingested(home)
        make_old(home, kb_id)
        open_killed_at(home, module, name)  # before the new format is recorded / before any acknowledgement
        assert not state(home)["check"].ok
        assert_rebuilt(home, kb_id)


def test_an_unreadable_marker_counts_as_a_changed_format(tmp_path):
    home = tmp_path / "home"
    kb_id = ingested(home)
    folder = home / "artifacts" / kb_id
    (folder / "kb-fast.format").write_bytes(b"\xff\xfe\x00")  # bytes nobody wrote as a format
    (folder / "kb-balanced.format").unlink()
    (folder / "kb-balanced.format").mkdir()  # not even a file
    assert len(state(home)["check"].staleIndexes) == 2
    assert_rebuilt(home, kb_id)
