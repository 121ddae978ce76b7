"""A kb store writes a source the same whether the kernel handed the units' analysis (protocol/handoff.py: each
field's terms already joined, written as they are) or the store analysed the units itself: the same rows, the
same full-text ranking, and the same terms per field for a write hook (kb-balanced's vectors read topic and
body). Real SQLite files and tantivy indexes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kb_corpus import BAKING, NETWORK, tree
from mrpvm.plugins.kb_common.fields import TEXT_FIELDS, unit_fields
from mrpvm.plugins.kb_common.store import KBStore, NewUnit
from mrpvm.protocol.handoff import decode_handoff, encode_handoff

QUERIES = [
    {"starter": 1.0, "flour": 0.5},
    {"timeout": 1.0, "retry": 0.7, "connection": 0.3},
    {"bread": 1.0},
    {"packet": 1.0, "water": 1.0},
]


def _rows(root: Path) -> dict[str, tuple[str, str, str, frozenset[str]]]:
    db = sqlite3.connect(root / "units.sqlite")
    try:
        return {
            i: (h, level, role, frozenset(t.split()))
            for i, h, level, role, t in db.execute("SELECT id, hash, level, role, terms FROM units")
        }
    finally:
        db.close()


def test_a_handed_analysis_writes_what_the_stores_own_analysis_writes(tmp_path):
    sources = [("baking", tree("baking", BAKING)), ("network", tree("network", NETWORK))]
    seen: dict[str, list[dict[str, list[str]]]] = {"handed": [], "own": []}

    def hook(kind: str):
        def record(_db, _old, new: list[NewUnit]) -> None:
            seen[kind].extend({name: list(n.fields[name]) for name in n.fields} for n in new)
            for n in new:
                assert set(n.texts) == set(TEXT_FIELDS)

        return record

    stores = {"handed": KBStore(tmp_path / "handed"), "own": KBStore(tmp_path / "own")}
    for source_id, units in sources:
        doc = decode_handoff(encode_handoff(source_id, source_id, "", units), source_id)
        assert doc.analysis and len(doc.analysis) == len(units)
        stores["handed"].upsert(source_id, source_id, doc.units, hook("handed"), analysis=doc.analysis)
        stores["own"].upsert(source_id, source_id, units, hook("own"))
    handed, own = _rows(tmp_path / "handed"), _rows(tmp_path / "own")
    assert handed == own and len(handed) == sum(len(units) for _, units in sources)
    assert seen["handed"] == seen["own"]
    assert seen["own"] == [unit_fields(u) for _, units in sources for u in units]
    for weights in QUERIES:
        found = {kind: store.search(weights, 10) for kind, store in stores.items()}
        assert found["handed"] == found["own"]
    assert any(store.search(QUERIES[0], 10) for store in stores.values())
    for store in stores.values():
        store.close()
