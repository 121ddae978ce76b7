"""Nodes that are gone (kernel/store_nodes.py), on both backends: a node not seen within
MRPVM_NODE_STALE_HOURS is owed nothing more and is forgotten (its acknowledgements and owed removals
dropped); `mrpvm store nodes` lists every node with when it was last seen; a forgotten node that comes
back rebuilds its indexes, so a source removed while it was away leaves its index too.

"Long ago" is written into the store's `seen_at` by the test: no test waits for a clock."""

from __future__ import annotations

import json

import pytest
from cli_support import mrpvm
from mrpvm.kernel.errors import BadInput
from mrpvm.kernel.node import node_stale_after_s
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store
from mrpvm.knowledge import index_ledger as ledger
from test_ingest_acks import FACT, KB_PLUGINS, QUESTION, TEXT
from test_store_nodes import check, node_env

LONG_AGO = "2001-01-01T00:00:00.000Z"


def seen_long_ago(store: Store, node: str) -> None:
    with store.transaction() as conn:
        conn.execute("UPDATE nodes SET seen_at = ? WHERE id = ?", (LONG_AGO, node))


def test_a_node_gone_stale_is_owed_nothing_and_then_forgotten(tmp_path, store_env):
    a = Store.open(tmp_path / "a", store_env | {"MRPVM_NODE_ID": "node-a"})
    b = Store.open(tmp_path / ("b" if store_env else "a"), store_env | {"MRPVM_NODE_ID": "node-b"})
    try:
        assert a.register_node() is False and b.register_node() is False  # new nodes: nothing to rebuild
        kb = a.create_kb("docs")
        for n in (1, 2):
            a.replace_source(kb.id, SourceRecord(id=f"s-{n}", kbId=kb.id, name=f"s{n}.md", hash=f"h{n}"), [])
        for store in (a, b):
            for source in store.list_sources(kb.id):
                assert ledger.record_ack(store, source, "kb-fast")
        a.remove_source(kb.id, "s1.md", ["kb-fast"])  # owed to both nodes
        assert len(ledger.pending_removals(b, ["kb-fast"])) == 1

        seen_long_ago(a, "node-b")  # node b's machine is gone
        assert a.nodes() == ["node-a"]
        a.remove_source(kb.id, "s2.md", ["kb-fast"])  # stale, not yet forgotten: owed only to node a
        owed = {
            r[0] for r in a._conn().execute("SELECT node_id FROM source_removals WHERE source_id = 's-2'")
        }
        assert owed == {"node-a"}

        assert a.register_node() is False  # any node's registration forgets the stale ones
        rows = a._conn().execute("SELECT COUNT(*) FROM source_acks WHERE node_id = 'node-b'").fetchone()[0]
        assert rows == 0 and ledger.pending_removals(b, ["kb-fast"]) == []
        records = {n.id: n for n in a.node_records()}
        assert (
            records["node-b"].forgottenAt and records["node-b"].stale and records["node-b"].seenAt == LONG_AGO
        )
        assert (
            records["node-a"].current
            and not records["node-a"].stale
            and records["node-a"].forgottenAt is None
        )

        assert b.register_node() is True  # it comes back: told to rebuild (nothing is acknowledged for it)
        assert [p.source.id for p in ledger.pending_sources(b, ["kb-fast"])] == []  # no source is left
        assert b.nodes() == ["node-a", "node-b"] and b.register_node() is False
        assert {n.id: n.forgottenAt for n in b.node_records()}["node-b"] is None
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("raw", ["0", "-3", "soon", "nan", "1e9"])
def test_a_bad_staleness_is_refused(raw):
    with pytest.raises(BadInput, match="MRPVM_NODE_STALE_HOURS"):
        node_stale_after_s({"MRPVM_NODE_STALE_HOURS": raw})
    assert node_stale_after_s({"MRPVM_NODE_STALE_HOURS": "0.5"}) == 1800.0
    assert node_stale_after_s({}) == 168 * 3600.0


def test_a_forgotten_node_that_comes_back_rebuilds_its_index(tmp_path, pg_url):
    """Node b indexes two sources, goes away, is forgotten; meanwhile node a removes one. Back, b's
    `kb check` rebuilds its index from the store: the removed source no longer answers there. (Two
    machines share a server store; on SQLite one home is one node, covered by the store-level test.)"""
    store_env = {"MRPVM_STORE_URL": pg_url}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "relay.md").write_text(TEXT)
    (docs / "other.md").write_text("# Pumps\n\nThe backup pump starts after 40 seconds.\n")
    a = node_env(tmp_path / "a", store_env, "node-a")
    b = node_env(tmp_path / "b", store_env, "node-b")
    for path in ("relay.md", "other.md"):
        assert mrpvm(a, "ingest", "--kb", "docs", str(docs / path), timeout=180).returncode == 0
    code, _ = check(b)  # node b builds its index
    assert code == 0
    assert FACT in mrpvm(b, "ask", QUESTION, "--kb", "docs", timeout=180).stdout.decode()

    with Store.open(tmp_path / "a", store_env | {"MRPVM_NODE_ID": "node-a"}) as store:
        seen_long_ago(store, "node-b")
    listed = mrpvm(a, "store", "nodes", "--json", timeout=120)
    assert listed.returncode == 0, listed.stderr
    nodes = {n["id"]: n for n in json.loads(listed.stdout)["nodes"]}
    assert nodes["node-b"]["stale"] and nodes["node-b"]["seenAt"] == LONG_AGO and not nodes["node-a"]["stale"]
    removed = mrpvm(a, "kb", "rm-source", "docs", "relay.md", timeout=180)
    assert removed.returncode == 0, removed.stderr
    listed = json.loads(mrpvm(a, "store", "nodes", "--json", timeout=120).stdout)  # a registered: b forgotten
    assert {n["id"]: n["forgottenAt"] is not None for n in listed["nodes"]} == {
        "node-a": False,
        "node-b": True,
    }

    code, report = check(b)  # back: forgotten, so its index is rebuilt from the store
    assert code == 0 and report["ok"] and report["node"] == "node-b"
    assert [s["name"] for s in report["sources"]] == ["other.md"]
    assert report["sources"][0]["missing"] == KB_PLUGINS  # before the repair: nothing vouched for
    code, report = check(b, "--no-repair")
    assert code == 0 and report["sources"][0]["acknowledged"] == KB_PLUGINS
    asked = mrpvm(b, "ask", QUESTION, "--kb", "docs", timeout=180).stdout.decode()
    assert FACT not in asked  # the removed source left node b's index although b missed the removal
