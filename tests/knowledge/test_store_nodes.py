"""Several nodes on one store (README "Running on several machines"): each node's kb indexes are its own, so
`kb check` on a node that has not indexed a source says so, repairs it from the shared store, and the
node then answers from it; a removal is owed to every node. On both backends: two homes sharing one
PostgreSQL, and (SQLite) a database copied to a second home, the case that used to report a false OK."""

from __future__ import annotations

import json
import shutil

from cli_support import cli_env, mrpvm
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store
from mrpvm.knowledge import index_ledger as ledger
from test_ingest_acks import ENABLED, FACT, KB_PLUGINS, QUESTION, TEXT


def node_env(home, store_env, node: str) -> dict[str, str]:
    return cli_env(home) | {"MRPVM_ENABLED_PLUGINS": ENABLED, "MRPVM_NODE_ID": node} | store_env


def check(env, *args: str) -> tuple[int, dict]:
    proc = mrpvm(env, "kb", "check", "docs", "--json", *args, timeout=180)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_kb_check_tells_the_truth_on_a_node_without_the_index(tmp_path, store_env):
    doc = tmp_path / "relay.md"
    doc.write_text(TEXT)
    a = node_env(tmp_path / "a", store_env, "node-a")
    ingest = mrpvm(a, "ingest", "--kb", "docs", str(doc), timeout=180)
    assert ingest.returncode == 0, ingest.stderr
    if not store_env:  # SQLite: the second machine got a copy of the database, not the artifacts
        (tmp_path / "b").mkdir()
        shutil.copy(tmp_path / "a" / "mrpvm.db", tmp_path / "b" / "mrpvm.db")
    b = node_env(tmp_path / "b", store_env, "node-b")

    code, report = check(b, "--no-repair")
    assert code == 1 and report["ok"] is False and report["node"] == "node-b"
    assert report["sources"][0]["missing"] == KB_PLUGINS and report["sources"][0]["acknowledged"] == []
    code, report = check(a, "--no-repair")  # the node that indexed it is fine
    assert code == 0 and report["ok"] and report["sources"][0]["acknowledged"] == KB_PLUGINS

    human = mrpvm(b, "kb", "check", "docs", timeout=180)  # repairs from the store
    assert human.returncode == 0, human.stderr
    assert "OK: every kb-plugin's index holds every source (after the repair) on node node-b" in (
        human.stdout.decode()
    )
    asked = mrpvm(b, "ask", QUESTION, "--kb", "docs", timeout=180)
    assert FACT in asked.stdout.decode()
    assert any((tmp_path / "b" / "artifacts").iterdir())


def test_acknowledgements_and_removals_are_per_node(tmp_path, store_env):
    a = Store.open(tmp_path / "a", store_env | {"MRPVM_NODE_ID": "node-a"})
    b = Store.open(tmp_path / ("b" if store_env else "a"), store_env | {"MRPVM_NODE_ID": "node-b"})
    try:
        for store in (a, b):
            store.register_node()
        kb = a.create_kb("docs")
        source = a.replace_source(kb.id, SourceRecord(id="s-1", kbId=kb.id, name="s.md", hash="h1"), [])
        assert ledger.record_ack(a, source, "kb-fast")
        assert ledger.pending_sources(a, ["kb-fast"]) == []
        (owed,) = ledger.pending_sources(b, ["kb-fast"])  # node b has not indexed it
        assert owed.missing == ["kb-fast"] and ledger.acknowledgements(b, kb.id) == {}
        assert ledger.record_ack(b, source, "kb-fast") and ledger.pending_sources(b, ["kb-fast"]) == []
        assert ledger.forget_acknowledgements(b, kb.id) == 1  # a full re-index on b leaves a alone
        assert ledger.pending_sources(a, ["kb-fast"]) == []
        a.remove_source(kb.id, "s.md", ["kb-fast"])
        for store in (a, b):  # each node's index still holds it until that node drops it
            (removal,) = ledger.pending_removals(store, ["kb-fast"])
            assert removal.sourceId == "s-1" and removal.plugins == ["kb-fast"]
        ledger.record_removal_ack(a, "s-1", "kb-fast")
        assert ledger.pending_removals(a, ["kb-fast"]) == []
        assert len(ledger.pending_removals(b, ["kb-fast"])) == 1
        assert a.nodes() == ["node-a", "node-b"]
    finally:
        a.close()
        b.close()
