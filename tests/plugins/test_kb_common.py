"""kb family algorithms, called in-process through the real handlers (Plugin.run) and the kb_common API."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kb_corpus import BAKING, NETWORK, intent, retrieve_request, selected, source_request, tree, unit
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.kb_common import (
    Candidate,
    KBStore,
    MemoryIndex,
    SelectionConfig,
    Views,
    build_profile,
    guess_act,
    memory_index,
    remove_redundant,
)
from mrpvm.plugins.kb_common.fields import analyse
from mrpvm.plugins.kb_common.selection import ancestor_map
from mrpvm.plugins.kb_fast.__main__ import plugin as fast
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.cnl import parse_document, render_document
from mrpvm.protocol.envelope import Request, encode_request

PLUGINS = [fast, balanced]

UNITS = tree(
    "network", NETWORK, "Home network guide: router setup, mesh networks, guest network and wireless bands."
) + tree("baking", BAKING, "Sourdough baking guide: reviving and feeding a starter, steam, crust and crumb.")


def run(plugin, request: Request):
    doc, failure, code = plugin.run(encode_request(request))
    assert doc is not None, failure
    assert code == 0
    # what goes on the wire parses back as a valid retrieve output
    parse_document(render_document(doc), "retrieve")
    return doc


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
@pytest.mark.parametrize(
    ("act", "question", "expected"),
    [
        ("implement", "How do I reset the router?", "network::chunk-000::unit-000"),
        ("define", "What is a sourdough starter?", "baking::chunk-000::unit-001"),
        ("identify", "Who revived the starter her grandmother had dried?", "baking::chunk-000::unit-000"),
        ("explain", "Why does steam keep the crust soft?", "baking::chunk-001::unit-003"),
        ("evaluate", "Can the guest network reach the printers?", "network::chunk-000::unit-002"),
        ("diagnose", "Why is the crumb of my bread dense and gummy?", "baking::chunk-001::unit-004"),
    ],
)
def test_right_unit_beats_distractors(plugin, act, question, expected):
    doc = run(plugin, retrieve_request([intent(1, act, question)], UNITS))
    picked = selected(doc)
    assert picked and picked[0] == expected
    assert doc.resolved[0].sufficient
    # the tight set: nothing from the other document
    other = "baking" if expected.startswith("network") else "network"
    assert not [i for i in picked if i.startswith(other)]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_comparison_keeps_both_sides(plugin):
    doc = run(plugin, retrieve_request([intent(1, "compare", "Compare the 5 GHz and 2.4 GHz bands.")], UNITS))
    text = " ".join(u.body for u in doc.units if u.id in selected(doc))
    assert "5 GHz" in text and "2.4 GHz" in text
    assert all(i.startswith("network") for i in selected(doc))


def _twins(role_a: str, role_b: str):
    a = unit(
        "a",
        role_a,
        "pruning roses",
        "Pruning roses: cut each stem just above an outward bud in early spring.",
    )
    b = unit(
        "b",
        role_b,
        "pruning roses",
        "Pruning roses in early spring, Ana cut each stem just above an outward bud.",
    )
    return [a, b]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_act_role_boost_changes_ranking(plugin):
    units = _twins("Procedure", "Narrative")
    question = "pruning roses in early spring"
    how = run(plugin, retrieve_request([intent(1, "implement", question)], units))
    tell = run(plugin, retrieve_request([intent(1, "describe", question)], units))
    assert selected(how)[0] == "a"  # implement prefers Procedure
    assert selected(tell)[0] == "b"  # describe prefers Narrative


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_guidance_survives_lexical_filtering(plugin):
    rule = unit(
        "session::t1::unit-009",
        "Constraint",
        "answer format",
        "Reply with one word only.",
        scopes=["gs-plugin"],
    )
    plan = unit(
        "session::t1::unit-010",
        "Constraint",
        "planning",
        "Prefer the shortest plan.",
        scopes=["mrp-plan-plugin"],
    )
    intents = [
        intent(1, "implement", "How do I reset the router?"),
        intent(2, "define", "What is a sourdough starter?"),
    ]
    doc = run(plugin, retrieve_request(intents, [*UNITS, rule, plan]))
    by_id = {u.id: u for u in doc.units}
    for kept in (rule.id, plan.id):
        assert kept in by_id and by_id[kept].resolvedFor == ["intent-1", "intent-2"]
        for resolved in doc.resolved:
            assert kept in resolved.guidance
            assert kept not in resolved.selected  # guidance is not evidence
    assert list(by_id).count(rule.id) == 1


def test_guidance_for_another_phase_is_not_forced():
    sd_only = unit(
        "session::t1::unit-011", "Constraint", "splitting", "Split questions at 'also'.", scopes=["sd-plugin"]
    )
    doc = run(
        fast, retrieve_request([intent(1, "implement", "How do I reset the router?")], [*UNITS, sd_only])
    )
    assert sd_only.id not in {u.id for u in doc.units}


def test_kb_guidance_is_ranked_not_forced(tmp_path):
    art = tmp_path / "kb-fast"
    advice = unit(
        "policy::chunk-000::unit-000",
        "Constraint",
        "router questions",
        "For router questions check the procedure units before the definitions.",
        source="policy",
        scopes=["mrp-plan-plugin"],
    )
    run_src = fast.run(encode_request(source_request("policy", [advice], art)))
    assert run_src[0] is not None and run_src[0].result.status == "success"
    hit = run(fast, retrieve_request([intent(1, "implement", "How do I reset the router?")], UNITS, art))
    miss = run(fast, retrieve_request([intent(1, "define", "What is a sourdough starter?")], UNITS, art))
    assert advice.id in hit.resolved[0].guidance and advice.id in {u.id for u in hit.units}
    assert advice.id not in {u.id for u in miss.units}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_level_selection_broad_and_specific(plugin):
    broad = run(
        plugin,
        retrieve_request([intent(1, "describe", "Give an overview of the home network guide.")], UNITS),
    )
    specific = run(plugin, retrieve_request([intent(1, "define", "What is a mesh network?")], UNITS))
    assert broad.resolved[0].kuLevelsUsed[-1] in ("aggregate", "composite")
    assert selected(broad)[0] == "network::source-summary"
    assert specific.resolved[0].kuLevelsUsed == ["atomic"]
    assert selected(specific)[0] == "network::chunk-000::unit-001"


def _long_section() -> list:
    filler = " ".join(
        f"Shelf {i} holds tins of paint, brushes and rollers for the workshop." for i in range(30)
    )
    kids = [
        unit(
            "shed::c::u0",
            "Description",
            "paint storage",
            filler,
            source="shed",
            parents=["shed::section-000"],
        ),
        unit(
            "shed::c::u1",
            "Procedure",
            "sharpening chisels",
            "1. Flatten the back of the chisel on a coarse stone.\n2. Hone the bevel at thirty degrees.",
            source="shed",
            parents=["shed::section-000"],
        ),
    ]
    section = unit(
        "shed::section-000",
        "Description",
        "workshop",
        filler + " Chisels are sharpened by flattening the back on a coarse stone and honing the bevel.",
        source="shed",
        kind="composite",
        children=[k.id for k in kids],
    )
    return [*kids, section]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_too_large_unit_gives_its_relevant_children(plugin):
    doc = run(
        plugin,
        retrieve_request([intent(1, "implement", "How do I sharpen a chisel on a stone?")], _long_section()),
    )
    assert selected(doc)[0] == "shed::c::u1"
    assert "shed::section-000" not in selected(doc)


def test_expands_to_parent_when_broader_context_is_wanted():
    kids = [
        unit(
            "w::c::u0",
            "Description",
            "watering tomatoes",
            "Water tomatoes deeply twice a week at the roots.",
            source="w",
            parents=["w::s0"],
        ),
        unit(
            "w::c::u1",
            "Description",
            "tomato mulch",
            "Mulch around tomatoes keeps the roots moist between waterings.",
            source="w",
            parents=["w::s0"],
        ),
        unit(
            "w::c::u2",
            "Description",
            "tomato leaves",
            "Wet tomato leaves invite blight, so avoid watering from above.",
            source="w",
            parents=["w::s0"],
        ),
    ]
    section = unit(
        "w::s0",
        "Description",
        "garden care",
        "Care notes.",
        source="w",
        kind="composite",
        children=[k.id for k in kids],
    )
    doc = run(
        fast,
        retrieve_request(
            [intent(1, "explain", "Explain how watering tomatoes affects their roots and leaves.")],
            [*kids, section],
        ),
    )
    assert selected(doc) == ["w::s0"]
    assert doc.resolved[0].kuLevelsUsed == ["composite"]
    # a specific question about the same units stays atomic
    doc = run(
        fast,
        retrieve_request([intent(1, "identify", "How often should tomatoes be watered?")], [*kids, section]),
    )
    assert "w::s0" not in selected(doc)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_unrelated_question_is_insufficient(plugin):
    doc = run(
        plugin,
        retrieve_request([intent(1, "evaluate", "What is the boiling point of mercury in Kelvin?")], UNITS),
    )
    assert doc.result.status == "insufficient"
    assert doc.resolved[0].sufficient is False


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_partly_answerable_question_reports_low_coverage(plugin):
    doc = run(
        plugin,
        retrieve_request(
            [intent(1, "identify", "Which satellite relays the router signal to Jupiter?")], UNITS
        ),
    )
    assert doc.resolved[0].sufficient is False
    assert "coverage 0." in doc.resolved[0].notes


def test_near_duplicates_are_removed_by_fast():
    a = unit(
        "a", "Description", "ferry timetable", "The ferry to the island leaves the pier at eight and at noon."
    )
    b = unit(
        "b", "Description", "ferry timetable", "The ferry to the island leaves the pier at eight and at noon!"
    )
    c = unit("c", "Description", "ferry tickets", "Ferry tickets to the island are sold at the pier kiosk.")
    doc = run(fast, retrieve_request([intent(1, "describe", "ferry to the island from the pier")], [a, b, c]))
    assert len({"a", "b"} & set(selected(doc))) == 1
    assert "c" in selected(doc)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_unit_for_two_intents_appears_once(plugin):
    intents = [
        intent(1, "define", "What is a sourdough starter?"),
        intent(2, "identify", "Which yeast and bacteria live in a sourdough starter?"),
    ]
    doc = run(plugin, retrieve_request(intents, UNITS))
    ids = [u.id for u in doc.units]
    assert len(ids) == len(set(ids))
    shared = set(selected(doc, 1)) & set(selected(doc, 2))
    assert shared
    for u in doc.units:
        if u.id in shared:
            assert u.resolvedFor == ["intent-1", "intent-2"]
        assert u.score is not None and round(u.score, 4) == u.score


def test_bare_request_uses_context_items():
    from mrpvm.protocol.envelope import ContextItem

    items = [
        ContextItem(
            title="k1",
            sourceLink="notes",
            text="Role: Definition\nTopic: heat pump\nClaim: A heat pump moves heat from outside air into the house.",
        ),
        ContextItem(
            title="k2",
            sourceLink="notes",
            text="Role: Narrative\nTopic: holiday\nClaim: We drove to the coast in August.",
        ),
    ]
    doc = run(fast, Request(prompt="What is a heat pump?", context=items))
    assert selected(doc) == ["k1"]
    assert doc.result.status == "success"


def test_profile_breadth_and_meta_words():
    broad = build_profile(intent(1, "describe", "Give me an overview of the guide"))
    specific = build_profile(intent(1, "evaluate", "Is the router reset safe?", output="Yes or No"))
    moderate = build_profile(intent(1, "explain", "Explain how the router assigns addresses"))
    assert (broad.breadth, broad.level) == ("broad", "aggregate")
    assert (specific.breadth, specific.level) == ("specific", "atomic")
    assert (moderate.breadth, moderate.level) == ("moderate", "composite")
    assert moderate.weights["explain"] < moderate.weights["router"]
    assert "explain" not in moderate.content
    assert moderate.roles[0] == "Explanation"


@pytest.mark.parametrize(
    ("prompt", "act"),
    [
        ("How do I install the printer driver?", "implement"),
        ("What is a heat pump?", "define"),
        ("Why did the bridge close?", "explain"),
        ("Which port does the service use?", "identify"),
        ("Is the ferry running today?", "evaluate"),
        ("Compare tea and coffee.", "compare"),
    ],
)
def test_guess_act_for_bare_prompts(prompt, act):
    assert guess_act(prompt) == act


def test_memory_index_is_cached_by_content():
    state: dict = {}
    first = memory_index(state, UNITS)
    assert memory_index(state, list(UNITS)) is first
    changed = [*UNITS[:-1], msgspec.structs.replace(UNITS[-1], claim="Something else entirely.")]
    assert memory_index(state, changed) is not first
    assert isinstance(first, MemoryIndex) and first.size == len(UNITS)


def test_store_and_memory_index_agree_on_scores(tmp_path):
    """Same BM25 over the same units: the tantivy index and the in-memory index rank alike."""
    store = KBStore(tmp_path / "kb")
    store.upsert("network", "network.md", UNITS[:7])
    mem = MemoryIndex(UNITS[:7])
    weights = build_profile(intent(1, "implement", "reset the router with the default password")).weights
    disk = store.search(weights, 5)
    rows = store.fetch(k for k, _ in disk)
    disk_ranked = [(rows[k].unit.id, s) for k, s in disk]
    mem_ranked = [(mem.units[i].id, s) for i, s in mem.search(weights, 5)]
    assert [i for i, _ in disk_ranked] == [i for i, _ in mem_ranked]
    for (_, a), (_, b) in zip(disk_ranked, mem_ranked, strict=True):
        assert a == pytest.approx(b, rel=1e-3)
    store.close()


@given(st.text(alphabet=st.sampled_from(list("abcdeXYZ '’-s.é0 ")), max_size=60))
@settings(max_examples=300, deadline=None)
def test_cached_analysis_equals_sdk_terms(text):
    assert analyse(text) == terms(text)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_a_unit_restating_the_question_is_not_evidence(plugin):
    """Documents often carry their own exercise questions; the question is no evidence for its answer."""
    echo = unit(
        "doc::q", "Narrative", "exercise", "Q2: Explain why the lighthouse keeper left the island in winter."
    )
    faq = unit("doc::faq", "Description", "faq", "Q: Did the keeper return? A: Yes, in the spring.")
    fact = unit(
        "doc::fact",
        "Narrative",
        "the keeper",
        "The lighthouse keeper left the island each winter because the supply boat stopped.",
    )
    doc = run(
        plugin,
        retrieve_request(
            [intent(1, "explain", "Explain why the lighthouse keeper left the island in winter.")],
            [echo, faq, fact],
        ),
    )
    assert selected(doc)[0] == "doc::fact"
    assert "doc::q" not in {u.id for u in doc.units}
    assert "skipped 1 question units" in doc.resolved[0].notes
    asked = run(
        plugin,
        retrieve_request([intent(1, "evaluate", "Did the lighthouse keeper return?")], [echo, faq, fact]),
    )
    assert "doc::faq" in selected(asked)  # a FAQ entry carries its answer


def test_strategy_guidance_purpose_is_sufficient_on_guidance():
    plan = unit(
        "session::t1::unit-010",
        "Constraint",
        "planning",
        "Prefer procedures from the manual.",
        scopes=["mrp-plan-plugin"],
    )
    doc = run(
        fast,
        retrieve_request(
            [intent(1, "implement", "How do I bleed the brakes?")],
            [*UNITS, plan],
            purpose="strategy-guidance",
        ),
    )
    assert doc.resolved[0].sufficient and plan.id in doc.resolved[0].guidance
    assert doc.resolved[0].purpose == "strategy-guidance"


def test_a_unit_and_its_ancestor_are_never_both_kept():
    views = Views(MemoryIndex(UNITS), None)
    atom, section, source = "network::chunk-000::unit-001", "network::section-000", "network::source-summary"
    lineage = ancestor_map([atom, section], views)
    assert lineage[atom] == {section, source} and lineage[section] == {source}
    entries = views.lookup([atom, source])
    profile = build_profile(intent(1, "define", "What is a mesh network?"))
    for atom_score, source_score, kept in ((2.0, 1.0, atom), (1.0, 2.0, source)):
        ranked = sorted(
            [Candidate(entries[atom], atom_score), Candidate(entries[source], source_score)],
            key=lambda c: -c.score,
        )
        assert [c.id for c in remove_redundant(ranked, profile, views, SelectionConfig())] == [kept]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_whole_source_question_gets_the_source_summaries(plugin):
    doc = run(plugin, retrieve_request([intent(1, "describe", "Summarize the document.")], UNITS))
    assert set(selected(doc)) == {"network::source-summary", "baking::source-summary"}
    assert doc.resolved[0].sufficient and "whole-source" in doc.resolved[0].notes


def test_criterion_words_alone_do_not_make_evidence():
    filler = unit("f", "Description", "evidence handling", "Evidence must support the specific item named.")
    question = msgspec.structs.replace(
        intent(1, "identify", "What is the capital of Peru?"),
        criterion="The answer names the specific item asked for, supported by the evidence.",
    )
    doc = run(fast, retrieve_request([question], [*UNITS, filler]))
    assert selected(doc) == [] and doc.result.status == "insufficient"


def test_a_dropped_ancestor_does_not_take_other_units_with_it():
    views = Views(MemoryIndex(UNITS), None)
    first, summary, other = (
        "network::chunk-000::unit-001",
        "network::source-summary",
        "network::chunk-001::unit-003",
    )
    entries = views.lookup([first, summary, other])
    ranked = [
        Candidate(entries[first], 3.0),
        Candidate(entries[summary], 2.5),
        Candidate(entries[other], 1.0),
    ]
    profile = build_profile(intent(1, "explain", "Explain the mesh network and the 5 GHz band."))
    assert [c.id for c in remove_redundant(ranked, profile, views, SelectionConfig())] == [first, other]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.id)
def test_parallel_statements_under_one_heading_are_not_duplicates(plugin):
    """Two sibling units share every term of their heading; that is no sign they say the same thing, so a
    comparison keeps each side's own statement (issue 20: pc-q01 lost the second product's definition)."""
    heading = "Harbor 12 and Lumen 30: two studio lamps"
    lamps = [
        msgspec.structs.replace(
            unit(
                f"lamps::chunk-000::unit-00{i}",
                "Definition",
                name,
                f"The {name} is a lamp for studios of up to {size} square metres.",
            ),
            sectionTitle=heading,
        )
        for i, (name, size) in enumerate((("Harbor 12", 20), ("Lumen 30", 60)))
    ]
    views = Views(MemoryIndex(lamps), None)
    entries = views.lookup([u.id for u in lamps])
    ranked = [Candidate(entries[u.id], 2.0 - i) for i, u in enumerate(lamps)]
    profile = build_profile(intent(1, "compare", "Compare the Harbor 12 and the Lumen 30."))
    assert [c.id for c in remove_redundant(ranked, profile, views, SelectionConfig())] == [
        u.id for u in lamps
    ]
    doc = run(
        plugin, retrieve_request([intent(1, "compare", "Compare the Harbor 12 and the Lumen 30.")], lamps)
    )
    assert set(selected(doc)) == {u.id for u in lamps}


@settings(max_examples=300, deadline=None)
@given(
    st.frozensets(st.integers(0, 12).map(str), max_size=10),
    st.lists(st.frozensets(st.integers(0, 12).map(str), max_size=10), max_size=6),
    st.sampled_from([0.0, 0.2, 0.5, 0.8, 0.9, 1.0]),
)
def test_near_duplicate_check_agrees_with_jaccard(words, kept, threshold):
    # the size filter only skips pairs whose Jaccard cannot reach the threshold (empty sets included)
    from mrpvm.plugins.kb_common.selection import _near_duplicate, jaccard

    expected = any(jaccard(words, other) >= threshold for other in kept)
    assert _near_duplicate(words, len(words), [(o, len(o)) for o in kept], threshold) is expected
