"""Each distinct text is encoded once per warm worker: kb-balanced's intent vector serves both of its uses
in a call (dense neighbours, fused scores) and later calls with the same intent (plugins/kb_balanced/dense.py)."""

from __future__ import annotations

import pytest
from embedding_support import count_encodes
from kb_corpus import intent, retrieve_request, selected, source_request, tree
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.sdk.embedding import available
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
            ],
        ),
    ],
)


def test_an_intent_is_encoded_once_across_its_uses_and_calls(tmp_path, monkeypatch):
    import mrpvm.plugins.kb_balanced.dense as dense

    encoded = count_encodes(monkeypatch)
    monkeypatch.setattr(dense, "_queries", type(dense._queries)())
    art = tmp_path / "kb-balanced"
    doc, failure, _ = balanced.run(encode_request(source_request("kiln", DOCS, art)))
    assert doc is not None, failure
    encoded.clear()
    question = "Where does the kiln keep its saved schedules?"
    answers = []
    for _ in range(2):
        doc, failure, _ = balanced.run(
            encode_request(retrieve_request([intent(1, "identify", question)], artifacts=art, maxUnits=1))
        )
        assert doc is not None, failure
        answers.append(selected(doc))
    assert answers[0] == answers[1] == ["kiln::chunk-000::unit-000"]
    assert [t for t in encoded if "kiln" in t.lower() and "schedules" in t] == [question]
