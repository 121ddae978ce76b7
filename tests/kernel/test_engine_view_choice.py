"""The choice between insufficient knowledge views (kernel/engine/views.py `best_insufficient`): the view
whose best unit holds most of the question wins, not the one with the most units; on a tie, the view the
other kb-plugins agree with. Invented documents, scripted kb-plugins as real subprocesses."""

from __future__ import annotations

import msgspec
from engine_support import Harness, intent, nodes, unit
from mrpvm.kernel.engine.views import View, best_insufficient
from mrpvm.protocol.document import KnowledgeUnit, ResolvedIntent

FERRY = [
    unit("session::t::unit-000", "Ferries leave the north pier every hour."),
    unit("session::t::unit-001", "The ferry timetable changes in winter."),
    unit("session::t::unit-002", "Ferry tickets can be refunded up to 48 hours before departure."),
    unit("session::t::unit-003", "Ferries carry bicycles on the lower deck."),
    unit("session::t::unit-004", "The ferry crossing takes forty minutes."),
    unit("session::t::unit-005", "Ferries to the island stop running at midnight."),
    unit("session::t::unit-006", "Ferry tickets are sold at the pier."),
    unit("session::t::unit-007", "Refunds are paid within a week."),
]
IDS = [u["id"] for u in FERRY]


def script(question: str, kb: dict[str, list[str]], weights: str = "") -> dict:
    """sd-a detects the question over FERRY; each kb-plugin returns its ids as an insufficient view;
    gs-a answers with the evidence it was given."""
    retrieve = {
        plugin: {"retrieve": {"status": "insufficient", "select": ids, "termWeights": weights}}
        for plugin, ids in kb.items()
    }
    return {
        "sd-a": {"detectSeeds": {"intents": [intent(question)], "units": FERRY}},
        **retrieve,
        "gs-a": {"solve": {"answer": "from the view", "sources": "evidence"}},
    }


def solved_with(h: Harness) -> list[str]:
    return h.calls("gs-a", "solve")[0]["evidence"]


def kept_node(result) -> dict:
    kept = [
        n for n in nodes(result, kind="plugin", op="retrieve") if n["output"].get("keptAsBestInsufficient")
    ]
    assert len(kept) == 1
    return kept[0]


def test_the_view_whose_unit_holds_the_question_wins_over_a_view_with_more_units(tmp_path):
    """Five units about ferries against two, one of which says how tickets are refunded: the old rule
    (most units) solved the five, where no unit says "refund"."""
    five = [IDS[0], IDS[1], IDS[3], IDS[4], IDS[5]]
    two = [IDS[2], IDS[0]]
    h = Harness(tmp_path, script("Can a ferry ticket be refunded?", {"kb-a": five, "kb-b": two}))
    result = h.ask("Can a ferry ticket be refunded?")
    assert solved_with(h) == two
    assert result.response_document["groups"][0]["plugins"]["kb"] == "kb-b"
    kept = kept_node(result)
    assert kept["pluginId"] == "kb-b"
    assert kept["output"]["viewMeasure"]["coverage"] == 1.0
    assert "covers 1.0 of the question" in kept["output"]["keptBecause"]
    other = nodes(result, kind="plugin", op="retrieve", pluginId="kb-a")[0]
    assert other["output"]["viewMeasure"]["coverage"] < 0.5
    assert "keptAsBestInsufficient" not in other["output"]


def test_the_reported_term_weights_say_which_words_matter(tmp_path):
    """Unweighted, "Ferry tickets are sold at the pier." holds two of the three terms and "Refunds are
    paid within a week." one; the kb-plugins' weights say "ferri" and "ticket" are common and "refund"
    rare, so the view with the refund unit is solved though it has fewer units."""
    weights = "ferri=0.100; ticket=0.200; refund=4.000"
    question = "Can a ferry ticket be refunded?"
    three = [IDS[6], IDS[0], IDS[1]]
    one = [IDS[7]]
    h = Harness(tmp_path, script(question, {"kb-a": three, "kb-b": one}, weights))
    result = h.ask(question)
    assert solved_with(h) == one
    assert kept_node(result)["pluginId"] == "kb-b"
    # the same views without weights: the two-term unit covers more, and its view is solved
    h2 = Harness(tmp_path / "unweighted", script(question, {"kb-a": three, "kb-b": one}))
    h2.ask(question)
    assert solved_with(h2) == three


def test_on_equal_coverage_the_view_the_others_agree_with_wins_over_more_units(tmp_path):
    """Three views whose best unit is the same: kb-a adds two units no other plugin selected, kb-b and
    kb-c select the same two. kb-b holds more of the others' selections, so it is solved, not kb-a."""
    question = "When do ferries to the island stop running?"
    kb = {"kb-a": [IDS[5], IDS[3], IDS[4]], "kb-b": [IDS[5], IDS[0]], "kb-c": [IDS[5], IDS[0]]}
    h = Harness(tmp_path, script(question, kb))
    result = h.ask(question)
    assert solved_with(h) == kb["kb-b"]
    kept = kept_node(result)
    assert kept["pluginId"] == "kb-b"
    assert "the most agreement (3 against 2)" in kept["output"]["keptBecause"]


def _view(plugin: str, ids: list[str], weights: str = "") -> View:
    units = [msgspec.convert(u, KnowledgeUnit) for u in FERRY if u["id"] in ids]
    resolved = ResolvedIntent(sufficient=False, selected=ids, termWeights=weights)
    return View(plugin, False, units, [], resolved, None, "low")


def test_bad_input_keeps_a_view_and_says_why():
    """No views: none kept. Empty views, a question of function words only, weights of 0 everywhere:
    coverage ties at 0 and the view with the others' selections (then more units) is kept."""
    assert best_insufficient("Can a ferry ticket be refunded?", [])[0] is None
    empty, one = _view("kb-a", []), _view("kb-b", [IDS[0]])
    best, why, measures = best_insufficient("Can it be?", [empty, one])
    assert best is one and measures["kb-a"]["coverage"] == 0.0 and "the most units (1 against 0)" in why
    zero = "ferri=0.000; ticket=0.000"
    views = [_view("kb-a", [IDS[6]], zero), _view("kb-b", [IDS[6], IDS[0]], zero)]
    best, why, _ = best_insufficient("Can a ferry ticket be refunded?", views)
    assert best is views[1] and "the most units" in why
    # kb-plugins reporting different weights: the largest of each term counts
    views = [_view("kb-a", [IDS[6]], "ticket=0.100"), _view("kb-b", [IDS[7]], "refund=3.000")]
    assert best_insufficient("Can a ferry ticket be refunded?", views)[0] is views[1]
