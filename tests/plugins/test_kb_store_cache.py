"""KBStore keeps the units it read back decoded for its generation (issue 22): a warm kb-worker's
retrievals reuse them; a change by any process (another worker of the same plugin) is seen after refresh."""

from __future__ import annotations

import msgspec
import pytest
from kb_corpus import BAKING, NETWORK, tree
from mrpvm.plugins.kb_common import store as store_module
from mrpvm.plugins.kb_common.fields import analyse
from mrpvm.plugins.kb_common.store import KBStore

UNITS = tree("network", NETWORK, "Home network guide: router setup, mesh networks and wireless bands.")


def test_a_unit_read_twice_is_decoded_once(tmp_path, monkeypatch):
    store = KBStore(tmp_path / "kb")
    store.upsert("network", "network.md", UNITS)
    decoded = []
    real = store_module._decode_unit
    monkeypatch.setattr(store_module, "_decode_unit", lambda raw: decoded.append(1) or real(raw))
    first = store.fetch_ids([UNITS[0].id, UNITS[1].id])
    keys = [first[UNITS[0].id].key, first[UNITS[1].id].key]
    again = store.fetch(keys)
    assert len(decoded) == 2  # the second read came from the store's memory
    assert again[keys[0]] is first[UNITS[0].id]
    assert store.fetch_ids([UNITS[0].id, "no-such-unit"]).keys() == {UNITS[0].id}
    store.close()


def test_a_change_by_another_worker_is_seen_after_refresh(tmp_path):
    reader = KBStore(tmp_path / "kb")
    reader.upsert("network", "network.md", UNITS)
    old = reader.fetch_ids([UNITS[0].id])[UNITS[0].id]
    old_key = old.key
    writer = KBStore(tmp_path / "kb")  # another process's view of the same folder
    changed = msgspec.structs.replace(UNITS[0], claim="Hold the reset button for ten seconds.")
    writer.upsert("network", "network.md", [changed, *UNITS[1:]])
    assert reader.refresh()
    now = reader.fetch_ids([UNITS[0].id])[UNITS[0].id]
    assert now.unit.claim == "Hold the reset button for ten seconds."
    assert now.key != old_key
    assert reader.fetch([old_key]) == {}  # the replaced row is gone, not served from memory
    reader.close()
    writer.close()


def test_the_memory_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "MAX_CACHED_UNITS", 3)
    store = KBStore(tmp_path / "kb")
    store.upsert("network", "network.md", UNITS)
    assert len(UNITS) > 3
    rows = store.fetch_ids([u.id for u in UNITS])
    assert {i: r.unit for i, r in rows.items()} == {u.id: u for u in UNITS}
    assert len(store._by_key) <= 3
    assert store.fetch_ids([UNITS[-1].id])[UNITS[-1].id].unit == UNITS[-1]
    store.close()


@pytest.mark.parametrize("count", [1, 2])
def test_fetch_answers_what_the_database_holds(tmp_path, count):
    store = KBStore(tmp_path / "kb")
    store.upsert("network", "network.md", UNITS)
    ids = [u.id for u in UNITS[:count]]
    for _ in range(2):  # cold, then from memory
        rows = store.fetch_ids(ids)
        assert [rows[i].unit for i in ids] == UNITS[:count]
        assert all(rows[i].terms for i in ids)
    store.close()


def test_idf_and_sources_follow_a_write_by_another_worker(tmp_path):
    reader = KBStore(tmp_path / "kb")
    reader.upsert("network", "network.md", UNITS)
    before = reader.idf("router")
    assert [s[0] for s in reader.sources()] == ["network"]
    writer = KBStore(tmp_path / "kb")
    writer.upsert("baking", "baking.md", tree("baking", BAKING, "Baking guide: bread, dough and ovens."))
    assert reader.idf("router") == before and len(reader.sources()) == 1  # kept until the generation moves
    assert reader.refresh()
    assert reader.idf("router") > before  # more documents, as many with the word: rarer
    assert [s[0] for s in reader.sources()] == ["baking", "network"]
    reader.close()
    writer.close()


def test_holds_follows_a_write_by_another_worker(tmp_path):
    reader = KBStore(tmp_path / "kb")
    reader.upsert("network", "network.md", UNITS)
    word = analyse("dough")[0]
    assert not reader.holds(word)
    writer = KBStore(tmp_path / "kb")
    writer.upsert("baking", "baking.md", tree("baking", BAKING, "Baking guide: bread, dough and ovens."))
    assert not reader.holds(word)  # kept until the generation moves
    assert reader.refresh() and reader.holds(word)
    reader.close()
    writer.close()
