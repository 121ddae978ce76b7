"""A question spelt otherwise than its documents (issue 20): "licence" asked of a guide that writes "license",
"catalogue" of one that writes "catalog", is read in the documents' own spelling (protocol/variants.py: one
edit away, the same first letters, frequent in the collection) and answered; a short or rare near word, or
one of another stem, is not read so. The document is invented."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from kb_corpus import retrieve_request
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.sdk.embedding import available
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.document import IntentGroup, parse_term_weights
from mrpvm.protocol.envelope import encode_request
from mrpvm.protocol.variants import respell, spelling_variant, spelling_variants

GUIDE = """# Quillmark guide

## License

Quillmark is distributed under the Tessel Public License, version 3. The license allows commercial use.
A copy of the license ships in the file TESSEL.txt.

## Catalog

The catalog lists every stencil Quillmark knows. Run `quillmark catalog --refresh` to rebuild the catalog
after adding stencils. The catalog is stored in the folder `~/.quillmark/stencils`.

## Colors

Each stencil has a color. The default color is slate grey.
"""


def _df(vocabulary: dict[str, int]):
    return lambda term: vocabulary.get(term, 0)


def test_an_absent_term_one_edit_from_a_frequent_one_is_read_as_it():
    held = _df({"licens": 4, "catalog": 3, "color": 2})
    assert spelling_variants(terms("licence catalogue colour"), held) == {
        "licenc": "licens",
        "catalogu": "catalog",
        "colour": "color",
    }


@pytest.mark.parametrize(
    ("asked", "vocabulary"),
    [
        ("form", {"from": 9}),  # too short: a short word has too many neighbours
        ("trail", {"trial": 9}),  # the edit changes the first letters: another stem
        ("patch", {"path": 9}),  # nor the fourth: spellings of one word differ in its ending
        ("licence", {"licens": 1}),  # one unit's spelling (perhaps a typo) is no spelling of the collection
        ("licence", {"licenc": 2, "licens": 9}),  # a term the collection holds is never re-spelt
        ("colour", {"colorful": 9}),  # two edits away
    ],
)
def test_no_variant_without_the_guards(asked, vocabulary):
    assert spelling_variants(terms(asked), _df(vocabulary)) == {}


def test_the_most_frequent_variant_is_taken():
    assert spelling_variant("catalogu", _df({"catalog": 2, "catalogs": 5})) == "catalogs"


def _retrieve(question: str):
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    doc, failure, _ = balanced.run(encode_request(retrieve_request([group], units_of(GUIDE, "quillmark.md"))))
    assert doc is not None, failure
    return doc.resolved[0]


def test_the_retriever_reports_the_variant_and_weighs_the_held_spelling():
    resolved = _retrieve("Under which licence is Quillmark distributed?")
    assert resolved.term_variants == {"licenc": "licens"}
    weights = parse_term_weights(resolved.termWeights)
    assert weights["licens"] > 0.0 and "licenc" not in weights


def test_a_near_word_of_another_meaning_is_not_matched():
    resolved = _retrieve("Which form does Quillmark print?")  # "form" is no spelling of "from"
    assert resolved.term_variants == {}


needs_model = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")


@needs_model
def test_a_question_spelt_colour_is_answered_from_the_colors_section():
    # read as "colour", a word no document holds, the question was refused (no passage could state it)
    doc = ask("What is the default colour of a stencil?", units_of(GUIDE, "quillmark.md"))
    assert doc.result.status == "success"
    assert "slate grey" in doc.answer


@needs_model
@pytest.mark.parametrize(
    ("asked", "spelt"),
    [
        ("Under which licence is Quillmark distributed?", "Under which license is Quillmark distributed?"),
        ("Where is the catalogue stored?", "Where is the catalog stored?"),
        ("What is the default colour of a stencil?", "What is the default color of a stencil?"),
    ],
)
def test_a_variant_question_is_answered_as_the_documents_spelling_is(asked, spelt):
    units = units_of(GUIDE, "quillmark.md")
    got, expected = ask(asked, units), ask(spelt, units)
    assert (got.result.status, got.answer) == (expected.result.status, expected.answer)
    assert got.result.status == "success"


def test_respell_keeps_the_words_ending_and_capital():
    variants = {"licenc": "licens", "colour": "color", "catalogu": "catalog"}
    respelt = respell("Licences, colours and the catalogue?", variants)
    assert respelt.startswith("Licenses, colors and the catalog")
    assert terms(respelt) == terms("Licenses, colors and the catalog?")
    assert respell("The form and the trail.", variants) == "The form and the trail."
