"""kb-balanced: HDC encoding and similarity, the per-unit vector cache, fusion, MMR, and the process path."""

from __future__ import annotations

import mrpvm.plugins.kb_balanced.retriever as balanced_retriever
import msgspec
import numpy as np
import pytest
from kb_corpus import (
    BAKING,
    NETWORK,
    Worker,
    intent,
    one_shot,
    retrieve_request,
    selected,
    source_request,
    tree,
    unit,
)
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.kb_balanced.hdc import (
    CLAIM_DIM,
    TOPIC_DIM,
    Matrix,
    QueryVectors,
    encode_fields,
    encode_many,
    encode_terms,
    pairwise,
    similarity,
    unit_texts,
)
from mrpvm.plugins.kb_balanced.retriever import BalancedRetriever
from mrpvm.plugins.kb_balanced.vectors import VectorFile, join
from mrpvm.plugins.kb_common import KBStore
from mrpvm.plugins.kb_fast.__main__ import plugin as fast
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.envelope import encode_request

MODULE = "kb_balanced"
NET = tree(
    "network", NETWORK, "Home network guide: router setup, mesh networks, guest network and wireless bands."
)
BAKE = tree(
    "baking", BAKING, "Sourdough baking guide: reviving and feeding a starter, steam, crust and crumb."
)


def run(plugin, request):
    doc, failure, _ = plugin.run(encode_request(request))
    assert doc is not None, failure
    return doc


def vec(text: str) -> np.ndarray:
    return encode_terms(terms(text), CLAIM_DIM)


def test_similarity_is_baseline_shifted():
    a = vec("The harbour crane unloads container ships every morning.")
    same = similarity(a, a, CLAIM_DIM)[0]
    unrelated = similarity(vec("Violets bloom beside the quiet chapel in April."), a, CLAIM_DIM)[0]
    variant = similarity(vec("harbor cranes unloading containers"), a, CLAIM_DIM)[0]
    assert same == pytest.approx(1.0)
    assert unrelated < 0.1  # random overlap is subtracted, not counted as similarity
    assert variant > 0.25 > unrelated  # shared character n-grams: spelling and morphology variants still meet
    batch = encode_many([terms("container ships"), terms("chapel violets")], CLAIM_DIM)
    sims = similarity(batch, a, CLAIM_DIM)
    assert sims[0] > sims[1]
    pairs = pairwise(np.stack([a, batch[0], batch[1]]), CLAIM_DIM)
    assert pairs[0, 0] == pytest.approx(1.0) and pairs[0, 1] == pytest.approx(sims[0], abs=1e-6)


def test_vector_cache_reencodes_only_changed_units(tmp_path):
    retriever = BalancedRetriever("kb-balanced")
    store = KBStore(tmp_path / "kb")
    store.upsert("network", "network.md", NET, retriever.store_hook())
    assert retriever.last_write == (len(NET), 0)
    store.upsert("network", "network.md", NET, retriever.store_hook())
    assert retriever.last_write == (0, len(NET))  # nothing changed: every vector reused
    edited = [*NET[:-1], msgspec.structs.replace(NET[-1], claim="A different summary of the guide.")]
    store.upsert("network", "network.md", edited, retriever.store_hook())
    assert retriever.last_write == (1, len(NET) - 1)
    # the rows on disk are the encodings: a new process reads the same vectors by key
    rows, found = VectorFile(tmp_path / "kb").read([r[0] for r in store.db.execute("SELECT key FROM units")])
    assert found.all()
    expected = join(*encode_fields([unit_texts(u) for u in sorted(edited, key=lambda u: u.id)]))
    keys_by_id = dict(store.db.execute("SELECT id, key FROM units"))
    got, _ = VectorFile(tmp_path / "kb").read([keys_by_id[u.id] for u in sorted(edited, key=lambda u: u.id)])
    assert np.array_equal(got, expected) and rows.any()
    store.remove("network", retriever.store_hook())
    store.close()


def test_mmr_prefers_new_information_over_a_paraphrase():
    a = unit(
        "a",
        "Description",
        "harbour crane schedule",
        "The harbour crane unloads container ships every morning between six and nine.",
    )
    paraphrase = unit(
        "a2",
        "Description",
        "harbour crane timetable",
        "Every morning between six and nine the harbour crane unloads the container ships unless storms stop it.",
    )
    b = unit(
        "b",
        "Description",
        "crane maintenance",
        "The crane operators service the harbour crane hydraulics each Sunday.",
    )
    request = retrieve_request(
        [intent(1, "describe", "What does the harbour crane do?")], [a, paraphrase, b], maxUnits=2
    )
    assert set(selected(run(fast, request))) == {"a", "a2"}  # lexical order: the paraphrase is second
    chosen = selected(
        run(balanced, request)
    )  # the dense view may rank the paraphrase first: either, not both
    assert len(chosen) == 2 and chosen[1] == "b" and chosen[0] in ("a", "a2")


def test_associative_recall_finds_misspelt_terms():
    units = [
        unit(
            "f",
            "Description",
            "firewall configuration",
            "Configuration of the firewall rules happens in the admin console.",
        ),
        unit("g", "Description", "printer", "The printer on the second floor jams often."),
    ]
    request = retrieve_request([intent(1, "describe", "Where is the firewal configurashun done?")], units)
    assert selected(run(fast, request)) == []
    doc = run(balanced, request)
    assert selected(doc) == ["f"]
    assert doc.resolved[0].sufficient is False  # honest: no query term was actually found


def test_pool_mode_for_large_kbs(tmp_path, monkeypatch):
    art = tmp_path / "kb-balanced"
    run(balanced, source_request("network", NET, art))
    run(balanced, source_request("baking", BAKE, art))
    question = retrieve_request([intent(1, "implement", "How do I reset the router?")], artifacts=art)
    scan = run(balanced, question)
    monkeypatch.setattr(balanced_retriever, "SCAN_LIMIT", 3)
    pool = run(balanced, question)
    assert "scan mode" in scan.resolved[0].notes and "pool mode" in pool.resolved[0].notes
    assert selected(scan)[0] == selected(pool)[0] == "network::chunk-000::unit-000"


def test_worker_ingests_and_new_process_reads(tmp_path):
    art = tmp_path / "kb-balanced"
    worker = Worker(MODULE)
    try:
        doc = worker.call(source_request("baking", BAKE, art), "onSourceText")
        assert doc.result.status == "success"
        worker.call(source_request("network", NET, art), "onSourceText")
        session = [
            unit(
                "session::t2::unit-000",
                "Constraint",
                "answer style",
                "Answer in one sentence.",
                scopes=["gs-plugin"],
            )
        ]
        intents = [
            intent(1, "implement", "How do I feed a sourdough starter?"),
            intent(2, "compare", "Compare the 5 GHz and 2.4 GHz bands."),
        ]
        first = worker.call(retrieve_request(intents, session, art))
        second = worker.call(retrieve_request(intents, session, art))  # cached index, vectors and scan matrix
        assert selected(first, 1) == selected(second, 1)
        assert selected(first, 1)[0] == "baking::chunk-000::unit-002"
        assert all(i.startswith("network") for i in selected(first, 2))
        assert "session::t2::unit-000" in first.resolved[1].guidance
    finally:
        assert worker.close() == 0
    fresh = one_shot(
        MODULE, retrieve_request([intent(1, "define", "What is a mesh network?")], artifacts=art)
    )
    assert selected(fresh)[0] == "network::chunk-000::unit-001"


def test_bit_column_scan_matches_direct_similarity():
    rng = np.random.default_rng(3)
    n = 1001  # not a multiple of 8: the last byte of every column is partial
    topics = np.packbits(rng.random((n, TOPIC_DIM)) < 0.03, axis=1)
    claims = np.packbits(rng.random((n, CLAIM_DIM)) < 0.08, axis=1)
    matrix = Matrix(topics, claims)
    q = QueryVectors(terms("lantern harbour ferry timetable"), ("Description",), "describe")
    direct = 0.35 * similarity(topics, q.topic, TOPIC_DIM) + 0.35 * similarity(claims, q.claim, CLAIM_DIM)
    found = matrix.neighbours(q, 12)
    assert len(found) and set(found) <= set(np.argsort(-direct)[: len(found) + 2])
    assert np.allclose(
        matrix._similarity(matrix.claim_cols, matrix.claim_counts, q.claim, CLAIM_DIM),
        similarity(claims, q.claim, CLAIM_DIM),
    )


def _select_reference(ranked, sims: np.ndarray, budget: int) -> list:
    """MMR by its definition on the numpy matrix: each step takes the first best-valued candidate not
    yet chosen whose largest similarity to a chosen one stays under DUPLICATE_SIM."""
    from mrpvm.plugins.kb_balanced.mmr import DUPLICATE_SIM, MMR_LAMBDA

    top = ranked[0].score or 1.0
    chosen: list[int] = []

    def closest(i: int) -> float:
        return float(sims[i, chosen].max()) if chosen else 0.0

    while len(chosen) < budget:
        open_ = [i for i in range(len(ranked)) if i not in chosen and closest(i) < DUPLICATE_SIM]
        if not open_:
            break
        values = [MMR_LAMBDA * ranked[i].score / top - (1 - MMR_LAMBDA) * closest(i) for i in open_]
        chosen.append(open_[values.index(max(values))])
    return [ranked[i] for i in chosen]


@pytest.mark.parametrize("seed", range(40))
def test_mmr_select_on_rows_of_floats_matches_the_matrix_version(seed):
    from mrpvm.plugins.kb_balanced.mmr import select

    class Scored:
        def __init__(self, score: float):
            self.score = score

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 16))
    sims = rng.random((n, n))
    sims[rng.random((n, n)) < 0.2] = 0.85  # near-duplicates, dropped once a twin is chosen
    scores = np.sort(rng.random(n) * 5)[::-1]
    if seed % 5 == 0:
        scores[:] = 0.0  # no relevance at all: similarity alone decides
    ranked = [Scored(float(s)) for s in scores]
    budget = int(rng.integers(1, n + 2))
    assert select(ranked, sims.tolist(), budget) == _select_reference(ranked, sims, budget)
