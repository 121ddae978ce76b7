"""An ingest's sd worker starts before the store opens (`KernelContext.open(starting=…)`, session 32: the sd
call waits for that worker's start, and a fresh home's store takes 20-30 ms to open), and `mrpvm ingest`
leaves its workers' ends to the reaper while its store still checkpoints. Behaviour only: which worker
serves the call, what a failed open leaves running, what the store and the index hold afterwards."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest
from mrpvm.kernel.store import Store
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.shells.cli import ingest as ingest_cli
from mrpvm.shells.cli.main import main as cli_main

PLUGINS = Path(__file__).resolve().parents[1] / "support" / "ingest_plugins"

DOC = (
    "# Greenhouse\n\nThe vent opens above twenty-eight degrees. Close the vent at dusk.\n\n"
    "## Watering\n\nWater the seedlings every morning. The rain barrel feeds the drip line.\n"
)


def _prose(n: int) -> str:
    return "\n\n".join(f"The lantern number {i} hangs beside the gate of the orchard." for i in range(n))


def test_the_sd_worker_started_before_the_store_opens_serves_the_ingest(tmp_path, monkeypatch):
    running_at_store_open: list[bool] = []
    supervisors: list[object] = []
    open_store = Store.open

    def watching(home, environ=None):
        sup = supervisors[0]
        running_at_store_open.append(sup.running("test-sd"))  # type: ignore[attr-defined]
        return open_store(home, environ)

    monkeypatch.setattr(Store, "open", staticmethod(watching))

    def starting(supervisor) -> None:
        supervisors.append(supervisor)
        supervisor.prestart("test-sd")

    async def main():
        env = dict(os.environ, MRPVM_HOME=str(tmp_path), MRPVM_ENABLED_PLUGINS="test-sd,test-kb")
        ctx = await open_context(env, manifests_dir=PLUGINS, starting=starting)
        try:
            kb = ctx.store.create_kb("docs")
            result = await ingest_source(ctx, kb, "a.md", _prose(4), sd_plugin="test-sd")
            return result, ctx.supervisor.health(), [u.id for u in ctx.store.kb_units(kb.id)]
        finally:
            await ctx.aclose()

    result, health, ids = anyio.run(main)
    assert running_at_store_open == [True]  # started before the store opened
    assert result.chunks == 1 and result.notified == ["test-kb"]
    assert health["test-sd"]["spawns"] == 1 and health["test-sd"]["calls"] == 1  # that worker served it
    assert ids and len(ids) == len(set(ids))


def test_a_store_that_cannot_open_stops_the_worker_started_before_it(tmp_path, monkeypatch):
    pids: list[int] = []

    def failing(home, environ=None):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(Store, "open", staticmethod(failing))

    def starting(supervisor) -> None:
        assert supervisor.prestart("test-sd")
        for plugin in supervisor._plugins.values():
            for pool in plugin.pools():
                pids.extend(w.proc.pid for w in pool.workers)

    async def main():
        env = dict(os.environ, MRPVM_HOME=str(tmp_path), MRPVM_ENABLED_PLUGINS="test-sd,test-kb")
        with pytest.raises(sqlite3.OperationalError):
            await open_context(env, manifests_dir=PLUGINS, starting=starting)

    anyio.run(main)
    assert pids
    for pid in pids:  # reaped by the supervisor's close: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize(("uses_llm", "started"), [(False, ["sd-x"]), (True, [])])
def test_only_an_sd_plugin_without_an_llm_starts_before_the_store(uses_llm, started):
    calls: list[str] = []
    entry = SimpleNamespace(manifest=SimpleNamespace(usesLLM=uses_llm))
    supervisor = SimpleNamespace(
        registry=SimpleNamespace(get=lambda plugin_id, plugin_type: entry), prestart=calls.append
    )
    ingest_cli._start_sd(supervisor, "sd-x")  # type: ignore[arg-type]
    assert calls == started


def test_an_unknown_sd_plugin_is_left_to_the_ingest_to_report():
    from mrpvm.kernel.errors import UnknownPluginError

    def unknown(plugin_id, plugin_type):
        raise UnknownPluginError(f"no {plugin_type} {plugin_id}")

    calls: list[str] = []
    supervisor = SimpleNamespace(registry=SimpleNamespace(get=unknown), prestart=calls.append)
    ingest_cli._start_sd(supervisor, "sd-nope")  # type: ignore[arg-type]
    assert calls == []


def test_mrpvm_ingest_detaches_its_workers_and_still_checkpoints_the_store(tmp_path, monkeypatch, capsys):
    doc = tmp_path / "greenhouse.md"
    doc.write_text(DOC)
    home = tmp_path / "home"
    for key in [k for k in os.environ if k.startswith("MRPVM_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("MRPVM_HOME", str(home))
    monkeypatch.setenv("MRPVM_ENABLED_PLUGINS", "sd-symbolic,kb-fast")
    from mrpvm.kernel.context import KernelContext

    closes: list[dict[str, bool]] = []
    aclose = KernelContext.aclose

    async def recording(self, **kw):
        closes.append(kw)
        await aclose(self, **kw)

    monkeypatch.setattr(KernelContext, "aclose", recording)
    assert cli_main(["ingest", "--kb", "garden", "--json", str(doc)]) == 0
    first = json.loads(capsys.readouterr().out)["sources"][0]
    assert cli_main(["ingest", "--kb", "garden", "--json", str(doc)]) == 0  # the same text: unchanged
    second = json.loads(capsys.readouterr().out)["sources"][0]
    assert first["notified"] == ["kb-fast"] and first["units"] > 0 and not first["unchanged"]
    assert second["unchanged"] and second["sourceId"] == first["sourceId"]
    assert closes == [{"detach": True}, {"detach": True}]  # not `ending`: the store checkpoints
    wal = home / "mrpvm.db-wal"  # the kernel's store checkpointed at its close (`ending` would leave it)
    assert (home / "mrpvm.db").exists() and (not wal.exists() or wal.stat().st_size == 0)
