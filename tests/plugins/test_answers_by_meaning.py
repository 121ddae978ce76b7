"""Golden tests of answers by meaning (issue 20), on a document written here: the dense view of kb-balanced
finds a paraphrase BM25 misses, gs-symbolic answers a paraphrase and refuses a question whose words the
evidence repeats without answering it, and a supported answer is `success` while a weaker one is not."""

from __future__ import annotations

import json

import msgspec
import pytest
from embedding_support import count_encodes
from kb_corpus import intent, retrieve_request, selected, source_request, tree
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.kb_fast.__main__ import plugin as fast
from mrpvm.plugins.sdk.embedding import available
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import encode_request
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

VAULT = tree(
    "vault",
    [
        (
            "Storage",
            [
                (
                    "Description",
                    "snapshots",
                    "Snapshots are written to /srv/vault/snapshots every night at two o'clock.",
                ),
                (
                    "Description",
                    "copy command",
                    "The copy command copies one file; copies keep the file modes of the original copy.",
                ),
                ("Description", "retention", "Old snapshots are pruned after thirty days."),
            ],
        ),
        (
            "Network",
            [
                ("Description", "port", "The vault daemon listens on port 7400."),
                ("Description", "tls", "Connections are encrypted with TLS 1.3 only."),
            ],
        ),
    ],
)
SNAPSHOTS = "vault::chunk-000::unit-000"


def run(plugin, request) -> CnlDocument:
    doc, failure, _ = plugin.run(encode_request(request))
    assert doc is not None, failure
    return doc


def solve(question: str, units: list[KnowledgeUnit]) -> CnlDocument:
    payload = {
        "intent": msgspec.to_builtins(
            IntentGroup(index=1, act="identify", intent=question, output="free text")
        ),
        "evidence": msgspec.to_builtins([u for u in units if u.kuType == "atomic"]),
        "guidance": [],
        "allowDecompose": False,
    }
    request = {"op": "solve", "prompt": question, "context": [], "payload": payload}
    return parse_document(gs.handle(json.dumps(request).encode()), "solve")


def test_a_paraphrase_is_retrieved_by_the_dense_view_where_bm25_alone_misses(tmp_path):
    question = (
        "Where are nightly copies saved?"  # "copies" is the copy command's word; the answer says snapshots
    )
    chosen = {}
    for plugin, name in ((fast, "kb-fast"), (balanced, "kb-balanced")):
        art = tmp_path / name
        run(plugin, source_request("vault", VAULT, art))
        doc = run(plugin, retrieve_request([intent(1, "identify", question)], artifacts=art, maxUnits=1))
        chosen[name] = selected(doc)
    assert chosen["kb-fast"] != [SNAPSHOTS]
    assert chosen["kb-balanced"] == [SNAPSHOTS]
    size = (tmp_path / "kb-balanced" / "dense.vectors").stat().st_size
    assert size % 768 == 0 and size >= 768 * len(VAULT)  # one float16 row per unit, at its store key


def test_the_dense_vectors_are_reused_for_unchanged_units(tmp_path, monkeypatch):

    encoded = count_encodes(monkeypatch)
    art = tmp_path / "kb-balanced"
    run(balanced, source_request("vault", VAULT, art))
    first = (art / "dense.vectors").read_bytes()
    assert len(encoded) == len(VAULT)  # every unit once, in one batch
    encoded.clear()
    run(balanced, source_request("vault", VAULT, art))  # the same units again: rows copied, not re-encoded
    assert encoded == []
    again = (art / "dense.vectors").read_bytes()
    rows = len(first) - 768  # keys start at 1: row 0 is unused
    assert len(again) > len(first) and again[-rows:] == first[768:]  # the same vectors at the new keys


def test_a_paraphrased_question_is_answered_from_the_sentence_that_means_it():
    doc = solve("How long are snapshots kept?", VAULT)
    assert doc.result.status == "success"
    assert doc.answer.strip() == "Old snapshots are pruned after thirty days."
    assert "meaning" in (doc.result.evidence or "")


def test_an_unanswerable_question_is_refused_despite_sharing_every_word():
    doc = solve("Who pruned the old snapshots?", VAULT)
    assert doc.result.status == "no-context"
    assert doc.answer.strip() == NO_CONTEXT_ANSWER
    assert doc.sources == []


def test_ingest_encodes_while_the_deadline_allows_and_leaves_the_rest_pending(tmp_path):
    from mrpvm.plugins.kb_balanced.dense import dense_file, pending_rows, write_dense
    from mrpvm.plugins.kb_common import NewUnit

    new = [NewUnit(key=i + 1, unit=u, hash=f"h{i}", fields={}) for i, u in enumerate(VAULT)]
    done = write_dense(dense_file(tmp_path), [], new, deadline=0.0)  # already past: nothing encoded
    assert (done.encoded, done.pending) == (0, len(VAULT))
    rows, found = dense_file(tmp_path).read([n.key for n in new])
    assert found.all() and pending_rows(rows).all()  # zero rows: pending, never a dense neighbour
    again = write_dense(dense_file(tmp_path), [], new, deadline=float("inf"))  # a later offer encodes them
    assert (again.encoded, again.pending) == (len(VAULT), 0)


def test_units_that_read_alike_are_encoded_once_and_share_their_vector(tmp_path, monkeypatch):
    from mrpvm.plugins.kb_balanced.dense import dense_file, pending_rows, unit_text, write_dense
    from mrpvm.plugins.kb_common import NewUnit

    encoded = count_encodes(monkeypatch)
    twin = msgspec.structs.replace(VAULT[2], id="vault::chunk-009::unit-009")  # the same words elsewhere
    units = [*VAULT, twin]
    new = [NewUnit(key=i + 1, unit=u, hash=f"h{i}", fields={}) for i, u in enumerate(units)]
    done = write_dense(dense_file(tmp_path), [], new, deadline=float("inf"))
    assert sorted(encoded) == sorted({unit_text(u) for u in units})  # each distinct text once
    assert len(encoded) == len(units) - 1
    assert (done.encoded, done.pending) == (len(units), 0)
    rows, _ = dense_file(tmp_path).read([n.key for n in new])
    assert not pending_rows(rows).any()
    assert (rows[2] == rows[-1]).all() and not (rows[1] == rows[2]).all()
