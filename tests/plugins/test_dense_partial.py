"""A large source's dense view is built over several offers (plugins/kb_balanced/dense.py): one onSourceText
call encodes ENCODE_AT_LEAST units, then more while ENCODE_BUDGET_S lasts (here 2 units and 0 s: exactly
one batch of 2 units per call, whatever the machine's speed),
answers `partial` while units are pending, and each offer of the same source keeps the rows already
encoded and encodes the next batch, until it answers `success` with every row encoded — the same vectors
as one call would give. Meanwhile retrieval encodes the pending candidates it judges and says the view is
incomplete."""

from __future__ import annotations

import numpy as np
import pytest
from kb_corpus import intent, retrieve_request, selected, source_request, tree
from mrpvm.plugins.kb_balanced import dense
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.sdk.embedding import available
from mrpvm.plugins.sdk.embedding.quantize import FLOAT, INT8_AGREEMENT
from mrpvm.protocol.envelope import encode_request

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

DOCS = tree(
    "kiln",
    [
        (
            "Programs",
            [
                ("Description", "storage", "Firing programs are saved under /var/lib/kiln/programs."),
                ("Description", "limits", "A program holds at most twelve segments."),
                ("Description", "cooling", "The kiln cools for six hours before the lid may open."),
            ],
        ),
        (
            "Power",
            [
                ("Description", "supply", "The controller needs a 240 volt supply on its own breaker."),
                ("Description", "fuse", "A blown fuse stops the elements but keeps the display on."),
            ],
        ),
    ],
)


def _rows(art) -> np.ndarray:
    """The dense rows of the KB's current units, in key order."""
    from mrpvm.plugins.kb_common.store import open_store

    store = open_store({}, art, create=False)
    assert store is not None
    keys = [k for (k,) in store.db.execute("SELECT key FROM units ORDER BY key")]
    rows, found = dense.dense_file(art).read(keys)
    assert found.all()
    return rows


def _offer(art):
    doc, failure, _ = balanced.run(encode_request(source_request("kiln", DOCS, art)))
    assert doc is not None, failure
    return doc.result


def test_each_offer_encodes_the_next_share_until_the_view_is_complete(tmp_path, monkeypatch):
    whole = tmp_path / "whole"
    first = _offer(whole)  # the default budget: everything in one call
    assert first.status == "success"
    complete = _rows(whole)
    assert not dense.pending_rows(complete).any()

    monkeypatch.setattr(dense, "ENCODE_BUDGET_S", 0.0)
    monkeypatch.setattr(dense, "ENCODE_AT_LEAST", 2)
    monkeypatch.setattr(dense, "INGEST_BATCH", 2)
    art = tmp_path / "parts"
    statuses, pending = [], []
    for _ in range(10):
        result = _offer(art)
        statuses.append(result.status)
        pending.append(int(dense.pending_rows(_rows(art)).sum()))
        if result.status == "success":
            break
    total = len(DOCS)
    want = [total - 2 * n for n in range(1, (total + 1) // 2)]
    assert pending == [*want, 0] and statuses == ["partial"] * len(want) + ["success"]
    rows = _rows(art)
    got, ref = dense.from_rows(rows), dense.from_rows(complete)
    if dense.ingest_precision() == FLOAT:
        assert np.allclose(got, ref, atol=2e-3)  # float16 rows of the same vectors
    else:  # int8 quantizes activations per batch: a row moves a little with the texts encoded beside it
        assert float((got * ref).sum(axis=1).min()) >= INT8_AGREEMENT


def test_a_partial_answer_says_what_is_left(tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "ENCODE_BUDGET_S", 0.0)
    monkeypatch.setattr(dense, "ENCODE_AT_LEAST", 2)
    monkeypatch.setattr(dense, "INGEST_BATCH", 2)
    result = _offer(tmp_path / "kb")
    assert result.status == "partial"
    assert f"2 units encoded, 0 kept, {len(DOCS) - 2} pending" in (result.result or "")


def test_retrieval_on_an_incomplete_view_encodes_the_judged_units_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "ENCODE_BUDGET_S", 0.0)
    monkeypatch.setattr(dense, "ENCODE_AT_LEAST", 1)
    monkeypatch.setattr(dense, "INGEST_BATCH", 1)
    art = tmp_path / "kb"
    assert _offer(art).status == "partial"
    question = "Where does the kiln keep its saved schedules?"
    doc, failure, _ = balanced.run(
        encode_request(retrieve_request([intent(1, "identify", question)], artifacts=art, maxUnits=1))
    )
    assert doc is not None, failure
    notes = doc.resolved[0].notes
    assert f"dense view incomplete: {len(DOCS) - 1} units not encoded yet" in notes
    assert "best cosine 0.00" not in notes  # the pending candidates were judged by meaning
    assert selected(doc) == ["kiln::chunk-000::unit-000"]


def test_a_source_within_the_units_every_call_encodes_is_whole_whatever_the_time(tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "ENCODE_BUDGET_S", 0.0)  # the time budget is spent at once ...
    monkeypatch.setattr(dense, "ENCODE_AT_LEAST", len(DOCS))  # ... but this many units are always encoded
    monkeypatch.setattr(dense, "INGEST_BATCH", 3)
    assert _offer(tmp_path / "kb").status == "success"
    assert not dense.pending_rows(_rows(tmp_path / "kb")).any()
