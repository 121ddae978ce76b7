"""KBStore keeps a term's document frequency in the text fields for its generation (issue 22): a retrieve
asks it for every asked term and every one-edit spelling of a term no unit holds (protocol/variants.py),
three index reads each, and the same terms come back call after call. The kept count is the one the index
gives; a write by another worker is seen after refresh; the memory is bounded."""

from __future__ import annotations

from kb_corpus import tree
from mrpvm.plugins.kb_common import store as store_module
from mrpvm.plugins.kb_common.candidates import Views
from mrpvm.plugins.kb_common.fields import analyse
from mrpvm.protocol.variants import spelling_variants

BEES: list = [
    (
        "Hive inspection",
        [
            (
                "Procedure",
                "opening the hive",
                "Smoke the entrance gently, lift the crown board and check each frame for eggs and capped brood.",
            ),
            (
                "Definition",
                "brood frame",
                "A brood frame holds the comb where the queen lays eggs; capped brood means pupae are sealed.",
            ),
        ],
    ),
    (
        "Swarm control",
        [
            (
                "Constraint",
                "queen cells",
                "Queen cells along the bottom of a frame warn of a swarm within days; split the colony first.",
            ),
        ],
    ),
]
KILNS: list = [
    (
        "Firing",
        [
            (
                "Procedure",
                "bisque firing",
                "Fire the kiln slowly to cone 04 so the clay dries before it vitrifies.",
            )
        ],
    )
]
UNITS = tree("bees", BEES, "Beekeeping notes: hive inspections, brood frames and swarm control.")


def _fresh(store: store_module.KBStore, term: str) -> int:
    return max(store.text.doc_freq(f, term) for f in ("topic", "heading", "body"))


def _counting(store: store_module.KBStore, monkeypatch) -> list[tuple[str, str]]:
    reads: list[tuple[str, str]] = []
    real = store.text.doc_freq
    monkeypatch.setattr(store.text, "doc_freq", lambda f, t: reads.append((f, t)) or real(f, t))
    return reads


def test_text_df_is_the_index_count_read_once_per_generation(tmp_path, monkeypatch):
    store = store_module.KBStore(tmp_path / "kb")
    store.upsert("bees", "bees.md", UNITS)
    asked = analyse("queen brood frame swarm kiln honeycomb")
    expected = {t: _fresh(store, t) for t in asked}
    assert expected[analyse("frame")[0]] >= 2 and expected[analyse("kiln")[0]] == 0
    reads = _counting(store, monkeypatch)
    assert {t: store.text_df(t) for t in asked} == expected
    assert {t: store.holds(t) for t in asked} == {t: n > 0 for t, n in expected.items()}
    first = len(reads)
    assert first == 3 * len(set(asked))
    assert {t: store.text_df(t) for t in asked} == expected  # again: from the store's memory
    assert len(reads) == first
    store.close()


def test_a_spelling_variant_is_found_as_before_and_its_edits_are_read_once(tmp_path, monkeypatch):
    store = store_module.KBStore(tmp_path / "kb")
    store.upsert("bees", "bees.md", UNITS)
    views = Views(None, store)
    typo = analyse("broood queem")  # no unit holds either; "brood" and "queen" are one edit away
    fresh = spelling_variants(typo, lambda t: _fresh(store, t))
    reads = _counting(store, monkeypatch)
    assert spelling_variants(typo, views.df) == fresh
    assert fresh  # the invented typo has a variant: the test reads the path it means to
    first = len(reads)
    assert spelling_variants(typo, views.df) == fresh
    assert len(reads) == first  # the ~250 edits of the unheld term were not read again
    store.close()


def test_a_write_by_another_worker_is_counted_after_refresh(tmp_path):
    reader = store_module.KBStore(tmp_path / "kb")
    reader.upsert("bees", "bees.md", UNITS)
    kiln = analyse("kiln")[0]
    assert reader.text_df(kiln) == 0 and not reader.holds(kiln)
    writer = store_module.KBStore(tmp_path / "kb")  # another process's view of the same folder
    writer.upsert("kilns", "kilns.md", tree("kilns", KILNS, "Kiln notes: firing schedules."))
    assert reader.text_df(kiln) == 0  # kept until the generation moves
    assert reader.refresh()
    assert reader.text_df(kiln) == _fresh(reader, kiln) > 0 and reader.holds(kiln)
    reader.close()
    writer.close()


def test_the_memory_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "TEXT_DF_KEPT", 3)
    store = store_module.KBStore(tmp_path / "kb")
    store.upsert("bees", "bees.md", UNITS)
    asked = analyse("queen brood frame swarm hive smoke entrance")
    assert len(set(asked)) > 3
    assert [store.text_df(t) for t in asked] == [_fresh(store, t) for t in asked]
    assert len(store._text_df) <= 3
    store.close()


def test_the_generation_is_read_without_a_python_file_object(tmp_path, monkeypatch):
    store = store_module.KBStore(tmp_path / "kb")
    assert store.read_generation() == 0  # no write yet: no generation file
    store.upsert("bees", "bees.md", UNITS)
    written = store.read_generation()
    assert written == int((tmp_path / "kb" / "generation").read_bytes()) > 0

    def no_open(*args, **kwargs):
        raise AssertionError("read_generation opened a Python file object")

    monkeypatch.setattr(store_module, "open", no_open, raising=False)
    assert store.read_generation() == written  # every retrieve reads it: descriptor calls only
    (tmp_path / "kb" / "generation").write_bytes(b"not a number")
    assert store.read_generation() == 0
    (tmp_path / "kb" / "generation").write_bytes(b" " * 5000 + b"42")  # the number after one read's length
    assert store.read_generation() == 42
    store.close()
