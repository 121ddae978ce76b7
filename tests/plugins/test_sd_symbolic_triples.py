"""sd-symbolic triple extraction: every DS005 relation surface form, normalisation, confidence, rejections."""

from __future__ import annotations

import pytest
from mrpvm.plugins.sd_symbolic.shared.triples import extract_triple, norm_key, normalize_name
from mrpvm.protocol.vocab import RELATIONS

POSITIVE = [
    ("Marlowe uses a pressure gauge.", "Marlowe", "uses", "pressure gauge"),
    ("The lantern utilizes whale oil.", "lantern", "uses", "whale oil"),
    ("Harbor cranes use diesel engines.", "Harbor cranes", "uses", "diesel engines"),
    ("The guild provides apprenticeships.", "guild", "provides", "apprenticeships"),
    ("Our library offers evening classes.", "library", "provides", "evening classes"),
    ("The mill depends on the river.", "mill", "depends_on", "river"),
    ("The vineyard relies on seasonal workers.", "vineyard", "depends_on", "seasonal workers"),
    ("The bell tower is part of the cathedral.", "bell tower", "part_of", "cathedral"),
    ("The north wing belongs to the museum.", "north wing", "part_of", "museum"),
    ("Quillfeather is a messenger service.", "Quillfeather", "instance_of", "messenger service"),
    ("An astrolabe is a kind of inclinometer.", "astrolabe", "instance_of", "inclinometer"),
    ("Irrigation is relevant for dry regions.", "Irrigation", "relevant_for", "dry regions"),
    ("Soil acidity matters for blueberries.", "Soil acidity", "relevant_for", "blueberries"),
    ("The loom supports silk threads.", "loom", "supports", "silk threads"),
    ("Heavy frost causes cracked pipes.", "Heavy frost", "causes", "cracked pipes"),
    ("The drought led to famine.", "drought", "causes", "famine"),
    ("Sparks trigger grass fires.", "Sparks", "causes", "grass fires"),
    ("The courier can cross the mountains.", "courier", "has_capability", "cross the mountains"),
    ("The drone has the ability to hover.", "drone", "has_capability", "hover"),
    ("The ledger mentions three shipments.", "ledger", "mentions", "three shipments"),
    ("The pamphlet is about beekeeping.", "pamphlet", "about", "beekeeping"),
]


@pytest.mark.parametrize(("sentence", "subject", "relation", "obj"), POSITIVE)
def test_surface_forms(sentence: str, subject: str, relation: str, obj: str) -> None:
    triple = extract_triple(sentence)
    assert triple is not None, sentence
    assert (triple.subject, triple.relation, triple.object) == (subject, relation, obj)
    assert triple.relation in RELATIONS
    assert triple.confidence == 0.9


def test_every_relation_has_a_surface_form() -> None:
    assert {rel for _, _, rel, _ in POSITIVE} == set(RELATIONS)


NEGATIVE = [
    # subordinate and relative clauses are rejected (the fact is conditional or embedded)
    "When the pump uses solar power, the tank fills slowly.",
    "If the bakery provides bread, the market stays open.",
    "The cart that uses iron wheels is heavier.",
    "The ferry, which depends on the tide, leaves at dawn.",
    "Because the forge uses coal, the air is smoky.",
    # negated or hedged statements are rejected
    "The castle does not use a moat.",
    "The orchard never uses pesticides.",
    "The museum may provide guided tours.",
    "Rain is not a kind of snow.",
    "The robot cannot climb stairs.",
    # unresolved pronoun and demonstrative subjects are rejected
    "It uses a lot of water.",
    "They depend on the harvest.",
    "This method relies on guesswork.",
    # no relation form, or a question
    "The sun set behind the hills.",
    "Does the mill depend on the river?",
    # overlong subjects or objects
    "The small red wooden boat that my grandfather painted every spring uses oars.",
]


@pytest.mark.parametrize("sentence", NEGATIVE)
def test_no_triple(sentence: str) -> None:
    assert extract_triple(sentence) is None


def test_longer_sentences_get_lower_confidence() -> None:
    triple = extract_triple("The observatory uses a refracting telescope to track comets during winter.")
    assert triple is not None
    assert (triple.subject, triple.relation, triple.object) == ("observatory", "uses", "refracting telescope")
    assert 0.6 <= triple.confidence <= 0.8


def test_trailing_adverb_in_subject_is_dropped() -> None:
    triple = extract_triple("The foundry also provides castings.")
    assert triple is not None and triple.subject == "foundry" and triple.confidence < 0.9


def test_normalisation_keeps_casing_and_strips_determiners() -> None:
    assert normalize_name("the **Kestrel Line**.") == "Kestrel Line"
    assert normalize_name("an Old Mill,") == "Old Mill"
    assert norm_key("Kestrel  LINE") == norm_key("kestrel line")
    triple = extract_triple('- The Kestrel Line depends on the "North Yard".')
    assert triple is not None and (triple.subject, triple.object) == ("Kestrel Line", "North Yard")
