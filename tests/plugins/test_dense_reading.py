"""How kb-balanced's dense view reads a unit (plugins/kb_balanced/dense.py, session 30): its first MAX_TOKENS
word pieces (128, the length all-MiniLM-L6-v2 was trained at), a KB's rows encoded at ingest at the
first-stage precision (int8) while intents and inline units are float, and the nearest stored rows read again
in float by a retrieval. The encoder itself still reproduces sentence-transformers (256 tokens, float):
test_embedding.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from embedding_support import count_encodes
from kb_corpus import intent, retrieve_request, source_request, tree
from mrpvm.plugins.kb_balanced import dense
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.sdk.embedding import available, encoder, forward, shared_encoder
from mrpvm.plugins.sdk.embedding.quantize import FLOAT, INT8
from mrpvm.protocol.envelope import encode_request

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

# an invented option reference: a long unit whose words past the 128th word piece are not read
LEAD = "The --spool-depth option sets how many pages the printer queue holds before it refuses new jobs. "
FILLER = " ".join(f"tray{n} feeds sheet {n}." for n in range(25))  # the tails start past 160 word pieces
TAILS = ("Duplex printing is enabled by default.", "Colour profiles are loaded from the spool folder.")

SPOOL = tree(
    "spool",
    [
        (
            "Queue",
            [
                ("Description", "spool depth", "The spool keeps at most forty pages waiting to print."),
                ("Description", "spool folder", "Waiting pages are written to /var/spool/pages."),
                ("Description", "paper", "Plain paper up to 90 grams per square metre is accepted."),
            ],
        ),
        (
            "Network",
            [
                ("Description", "port", "The print daemon listens on port 6310."),
                ("Description", "discovery", "Printers announce themselves on the local network."),
            ],
        ),
    ],
)


def test_clip_is_the_tokenizers_own_truncation() -> None:
    enc = shared_encoder(FLOAT)
    assert enc is not None
    text = LEAD + FILLER
    long_ids = enc.tokenizer.encode(text * 2).ids  # truncated at forward.MAX_TOKENS (256)
    assert len(long_ids) == forward.MAX_TOKENS
    enc.tokenizer.enable_truncation(max_length=128)
    try:
        short_ids = enc.tokenizer.encode(text * 2).ids
    finally:
        enc.tokenizer.enable_truncation(max_length=forward.MAX_TOKENS)
    assert forward.clip(long_ids, 128) == short_ids
    assert forward.clip(short_ids[:10], 128) == short_ids[:10]


def test_the_view_reads_a_units_first_128_word_pieces() -> None:
    """Two texts differing only after the 128th word piece get one vector in the view, two in the encoder
    (which reads 256, as sentence-transformers does)."""
    enc = shared_encoder(FLOAT)
    assert enc is not None and dense.MAX_TOKENS == 128
    a, b = (LEAD + FILLER + " " + tail for tail in TAILS)
    view = enc.encode([a, b], dense.MAX_TOKENS)
    assert float(view[0] @ view[1]) > 0.99999
    whole = enc.encode([a, b])
    assert float(whole[0] @ whole[1]) < 0.9999
    assert float(view[0] @ enc.encode([LEAD])[0]) > float(whole[0] @ enc.encode([LEAD])[0])


def test_a_kbs_rows_are_int8_at_ingest_and_float_when_asked(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MRPVM_EMBED_PRECISION", raising=False)
    assert dense.ingest_precision() == INT8
    art = tmp_path / "kb-balanced"
    doc, failure, _ = balanced.run(encode_request(source_request("spool", SPOOL, art)))
    assert doc is not None, failure
    texts = [dense.unit_text(u) for u in SPOOL]
    keys = list(range(1, len(SPOOL) + 1))
    rows = dense.from_rows(dense.dense_file(art).read(keys)[0])
    int8, flt = shared_encoder(INT8), shared_encoder(FLOAT)
    assert int8 is not None and flt is not None
    by_int8 = int8.encode(texts, dense.MAX_TOKENS)
    by_float = flt.encode(texts, dense.MAX_TOKENS)
    # a row is each text's int8 vector (up to float16 and its batch), not the float one
    assert np.abs(rows - by_int8).max() < np.abs(rows - by_float).max()
    monkeypatch.setenv("MRPVM_EMBED_PRECISION", "float")
    assert dense.ingest_precision() == FLOAT


def _ingested(tmp_path: Path) -> Path:
    """kb-balanced's artifacts folder with SPOOL ingested (at the precision the environment sets)."""
    art = tmp_path / "kb-balanced"
    doc, failure, _ = balanced.run(encode_request(source_request("spool", SPOOL, art)))
    assert doc is not None, failure
    return art


def test_a_retrieval_reads_the_nearest_int8_rows_again_in_float(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MRPVM_EMBED_PRECISION", raising=False)
    monkeypatch.setattr(encoder, "_kept", {})
    art = _ingested(tmp_path)
    encoded = count_encodes(monkeypatch)
    question = "How many pages can wait in the queue?"
    doc, failure, _ = balanced.run(
        encode_request(retrieve_request([intent(1, "identify", question)], artifacts=art))
    )
    assert doc is not None, failure
    units = [t for t in encoded if t != question]
    assert 0 < len(units) <= dense.RESCORE_TOP  # the nearest rows, not the whole KB
    assert set(units) <= {dense.unit_text(u) for u in SPOOL}
    encoded.clear()  # the same question again: the float vectors are kept (worker cache and file)
    balanced.run(encode_request(retrieve_request([intent(1, "identify", question)], artifacts=art)))
    assert encoded == []


def test_float_ingest_rescores_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MRPVM_EMBED_PRECISION", "float")
    monkeypatch.setattr(encoder, "_kept", {})
    art = _ingested(tmp_path)
    encoded = count_encodes(monkeypatch)
    question = "Which port does the daemon use?"
    balanced.run(encode_request(retrieve_request([intent(1, "identify", question)], artifacts=art)))
    assert encoded == [question]


def test_kept_vectors_of_two_readings_live_in_two_files(tmp_path, monkeypatch) -> None:
    """One artifacts folder, the same text at float/256 and int8/128: each reading its own file, so neither
    empties nor serves the other's rows."""
    monkeypatch.setattr(encoder, "_kept", {})
    encoder.for_call(60.0, str(tmp_path))
    try:
        text = ["Waiting pages are written to /var/spool/pages."]
        plain = encoder.encode_kept(text)
        short = encoder.encode_kept(text, INT8, 128)
        assert plain is not None and short is not None
        names = sorted(p.name for p in tmp_path.glob("*.sqlite"))
        assert names == ["sentence-vectors.int8-128.sqlite", "sentence-vectors.sqlite"]
        again_plain, again_short = encoder.encode_kept(text), encoder.encode_kept(text, INT8, 128)
        assert again_plain is not None and again_short is not None
        assert np.array_equal(again_plain, plain) and np.array_equal(again_short, short)
        assert float(plain[0] @ short[0]) < 0.9999  # two readings indeed
    finally:
        encoder.for_call(60.0)
