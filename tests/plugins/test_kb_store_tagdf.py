"""KBStore's tag document frequencies (issue 22): counted once per distinct (role, acts) of a source's units,
they are exactly what one pass per unit gives — the same rows, the same counts, in the same insertion order —
across a first ingest, a replacement that changes roles and acts, another source and a removal."""

from __future__ import annotations

import msgspec
from kb_corpus import BAKING, NETWORK, tree
from mrpvm.plugins.kb_common.scoring import tag_terms
from mrpvm.plugins.kb_common.store import KBStore

NET = tree("network", NETWORK, "Home network guide: router setup, mesh networks and wireless bands.")
BAKE = tree("baking", BAKING, "Baking notes: dough, ovens and timing.")


def _reference(sources: dict[str, list]) -> list[tuple[str, str, int]]:
    """(field, term, df) in first-seen order, one unit at a time over the sources in ingest order."""
    df: dict[tuple[str, str], int] = {}
    for units in sources.values():
        for unit in units:
            for field, found in tag_terms(unit).items():
                for term in found:
                    df[(field, term)] = df.get((field, term), 0) + 1
    return [(f, t, n) for (f, t), n in df.items() if n]


def _rows(store: KBStore) -> list[tuple[str, str, int]]:
    return [
        tuple(r) for r in store.db.execute("SELECT field, term, df FROM tagdf WHERE df != 0 ORDER BY rowid")
    ]


def _as_set(rows):
    return sorted(rows)


def test_tag_counts_match_one_pass_per_unit(tmp_path):
    store = KBStore(tmp_path / "kb")
    assert len({(u.role, tuple(u.acts)) for u in NET}) < len(NET)  # repeated tag sets are counted, not lost
    store.upsert("network", "network.md", NET)
    assert _rows(store) == _reference({"network": NET})
    store.upsert("baking", "baking.md", BAKE)
    assert _as_set(_rows(store)) == _as_set(_reference({"network": NET, "baking": BAKE}))
    roles = sorted({u.role for u in NET + BAKE})
    changed = [
        msgspec.structs.replace(u, role=roles[i % len(roles)], utilityActs=None) if i % 3 == 0 else u
        for i, u in enumerate(NET)
    ]
    store.upsert("network", "network.md", changed)
    assert _as_set(_rows(store)) == _as_set(_reference({"network": changed, "baking": BAKE}))
    store.remove("baking")
    assert _as_set(_rows(store)) == _as_set(_reference({"network": changed}))
    store.close()


def test_tags_are_analysed_once_per_distinct_role_and_acts(tmp_path, monkeypatch):
    from mrpvm.plugins.kb_common import store_tags

    calls: list[tuple] = []
    real = store_tags.tag_terms_for
    monkeypatch.setattr(store_tags, "tag_terms_for", lambda r, a: calls.append((r, a)) or real(r, a))
    store = KBStore(tmp_path / "kb")
    store.upsert("network", "network.md", NET)
    assert len(calls) == len(set(calls)) == len({(u.role, tuple(u.acts)) for u in NET})
    store.close()
