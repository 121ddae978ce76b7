"""Sentence vectors kept in a plugin's artifacts folder (sdk embedding/kept.py, `encode_kept`).

What one worker encoded, a sibling worker, a restarted one and a fresh `mrpvm ask --source` process read
instead of encoding again, with the same answers; a file that is corrupt, from another model, unwritable or
full never fails a call.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import msgspec
import numpy as np
import pytest
from kb_corpus import intent, retrieve_request, selected, tree
from mrpvm.plugins.sdk.embedding import available, encode_kept, for_call, shared_encoder
from mrpvm.plugins.sdk.embedding import encoder as encoder_module
from mrpvm.plugins.sdk.embedding import kept as kept_module
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup
from mrpvm.protocol.envelope import encode_request

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

REAL_ENCODE = encoder_module.Encoder.encode  # the reference, not counted
TEXTS = [
    "Firing programs are saved under /var/lib/kiln/programs.",
    "A program holds at most twelve segments.",
    "Old snapshots are pruned after thirty days.",
]


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the model encodes from now on (it still encodes them)."""
    texts: list[str] = []
    real = encoder_module.Encoder.encode

    def counting(self, batch, *args, **kwargs):
        texts.extend(batch)
        return real(self, batch, *args, **kwargs)

    monkeypatch.setattr(encoder_module.Encoder, "encode", counting)
    monkeypatch.setattr(encoder_module, "_kept", {})  # no file left open from another test
    yield texts
    for_call(60.0)  # later calls of this process keep nothing


def _direct(texts: list[str]) -> np.ndarray:
    encoder = shared_encoder()
    assert encoder is not None
    return REAL_ENCODE(encoder, texts)


def test_kept_vectors_are_read_instead_of_encoded_again(tmp_path: Path, encoded: list[str]) -> None:
    for_call(60.0, str(tmp_path))
    first = encode_kept(TEXTS)
    assert encoded == TEXTS and (tmp_path / kept_module.FILE).exists()
    encoded.clear()
    encoder_module._kept.clear()  # a sibling worker or a fresh process: nothing in memory
    again = encode_kept([TEXTS[2], TEXTS[0], TEXTS[2]])
    assert encoded == []
    assert first is not None and again is not None
    assert np.array_equal(again, first[[2, 0, 2]])  # kept as encoded, bit for bit
    assert np.allclose(first, _direct(TEXTS), atol=1e-6)
    # a new text is encoded alone; the kept ones are still read
    mixed = encode_kept(["A kiln cools for eight hours.", TEXTS[1]])
    assert encoded == ["A kiln cools for eight hours."]
    assert mixed is not None and np.array_equal(mixed[1], first[1])


def test_without_a_folder_nothing_is_kept(tmp_path: Path, encoded: list[str]) -> None:
    for_call(60.0)
    assert encode_kept(TEXTS) is not None and encode_kept(TEXTS) is not None
    assert encoded == TEXTS + TEXTS
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("damage", ["garbage", "directory", "missing", "locked"])
def test_a_bad_file_or_folder_never_fails_the_call(tmp_path: Path, encoded: list[str], damage: str) -> None:
    folder = tmp_path / "art"
    folder.mkdir()
    path = folder / kept_module.FILE
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "directory":
        path.mkdir()
    elif damage == "missing":
        folder.rmdir()  # a retrieve never creates its folder
    holder = None
    if damage == "locked":  # a sibling holds the write lock for longer than a call waits
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN EXCLUSIVE")
    try:
        for_call(60.0, str(folder))
        for _ in range(2):
            got = encode_kept(TEXTS)
            assert got is not None and np.allclose(got, _direct(TEXTS), atol=1e-6)
    finally:
        if holder is not None:
            holder.close()
    assert encoded == TEXTS + TEXTS  # nothing could be kept: encoded each time
    assert damage != "missing" or not folder.exists()


def test_a_wrong_row_or_another_model_is_never_served(tmp_path: Path, encoded: list[str]) -> None:
    for_call(60.0, str(tmp_path))
    encode_kept(TEXTS)
    encoder_module._kept.clear()
    db = sqlite3.connect(tmp_path / kept_module.FILE)
    with db:
        db.execute("UPDATE vectors SET vector = x'00ff'")  # rows of the wrong size
    db.close()
    encoded.clear()
    assert np.allclose(encode_kept(TEXTS), _direct(TEXTS), atol=1e-6)  # type: ignore[arg-type]
    assert encoded == TEXTS

    encoder_module._kept.clear()
    kept = kept_module.KeptVectors(str(tmp_path), "another-model")
    assert kept.get(TEXTS) == {}  # the file is emptied for the other model's identity
    kept.put(TEXTS[:1], [np.ones(384, np.float32).tobytes()])
    kept.close()
    encoded.clear()
    got = encode_kept(TEXTS[:1])  # and emptied again for ours: the other model's vector is not read
    assert encoded == TEXTS[:1] and got is not None and np.allclose(got, _direct(TEXTS[:1]), atol=1e-6)


def test_the_file_keeps_at_most_max_rows_the_newest_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(kept_module, "MAX_ROWS", 5)
    monkeypatch.setattr(kept_module, "PRUNE_EVERY", 1)
    kept = kept_module.KeptVectors(str(tmp_path), "model")
    texts = [f"text {i}" for i in range(12)]
    for i, text in enumerate(texts):
        kept.put([text], [np.full(384, i, np.float32).tobytes()])
    found = kept.get(texts)
    assert sorted(found) == sorted(texts[-5:])
    assert all(np.frombuffer(found[t], np.float32)[0] == i for i, t in enumerate(texts) if t in found)
    kept.close()


def test_a_fresh_ask_over_the_same_source_encodes_none_of_its_units_again(tmp_path: Path, encoded) -> None:
    from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
    from mrpvm.plugins.kb_balanced.dense import InlineVectors

    units = tree(
        "kiln",
        [
            (
                "Programs",
                [
                    ("Description", "storage", TEXTS[0]),
                    ("Description", "limits", TEXTS[1]),
                ],
            ),
        ],
    )
    art = tmp_path / "_session" / "kb-balanced"
    art.mkdir(parents=True)
    question = "Where does the kiln keep its saved schedules?"
    request = encode_request(retrieve_request([intent(1, "identify", question)], units=units, artifacts=art))
    answers = []
    for attempt in range(2):
        balanced.handlers["retrieve"].__self__._inline_dense = InlineVectors()  # a fresh process's memory
        encoded.clear()
        doc, failure, _ = balanced.run(request)
        assert doc is not None, failure
        answers.append((selected(doc), [u.id for u in doc.units]))
        unit_texts = [t for t in encoded if "kiln" in t.lower() and t != question]
        if attempt == 0:
            assert unit_texts  # the first ask encodes the source's units
        else:
            assert unit_texts == []  # the second reads them from the folder
    assert answers[0] == answers[1]


def test_gs_symbolic_siblings_share_what_one_encoded(tmp_path: Path, encoded: list[str]) -> None:
    from mrpvm.plugins.gs_symbolic import meaning
    from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs

    units = tree("vault", [("Storage", [("Description", "retention", TEXTS[2])])])
    question = "How long are snapshots kept?"
    payload = {
        "intent": msgspec.to_builtins(
            IntentGroup(index=1, act="identify", intent=question, output="free text")
        ),
        "evidence": msgspec.to_builtins([u for u in units if u.kuType == "atomic"]),
        "guidance": [],
        "allowDecompose": False,
    }
    art = tmp_path / "kb" / "gs-symbolic"
    art.mkdir(parents=True)
    body = {
        "op": "solve",
        "prompt": question,
        "context": [],
        "payload": payload,
        "paths": {"artifacts": str(art)},
    }
    answers = []
    for _ in range(2):
        meaning._cache.clear()  # the sibling worker has seen nothing
        encoded.clear()
        answers.append(parse_document(gs.handle(json.dumps(body).encode()), "solve").answer)
    assert encoded == []  # the second worker encoded nothing: the first one's vectors were kept
    assert answers[0] == answers[1] == "Old snapshots are pruned after thirty days."
