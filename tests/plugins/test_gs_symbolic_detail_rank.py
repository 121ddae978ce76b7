""" "Which <plural noun> …" prefers, among passages that state the question alike, the one that names its
instances ("the MIT and Apache-2.0 licences"), not one that speaks of the class ("under several licences")."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.asked_kind import EVALUATION, asked_kind, kind_said

LOOM = """# Loom scheduler

## Licensing

The loom scheduler may be redistributed under several open licences, as its authors chose.
Redistribution of the loom scheduler is permitted under the Zlib and BSD-2-Clause licences.
Patches are accepted under the same terms.
"""


def test_a_which_plural_question_quotes_the_named_instances() -> None:
    answer = ask("Under which licences may the loom scheduler be redistributed?", units_of(LOOM)).answer
    assert "Zlib" in answer


KILN = """# Kiln controller manual

## Fields

`zone`
    A zone is a whole number between one and four, printed on the shelf.
    Leave it blank and the controller reads the top shelf.
    Note that the purpose of zones is to allow us to fire two glazes at once without mixing their curves.
"""


def test_what_is_x_for_quotes_the_stated_purpose_not_the_definition() -> None:
    answer = ask("What is the zone for?", units_of(KILN)).answer
    assert "fire two glazes" in answer


PRESS = """# Press controller release notes

## New in 4.0

The press now accepts the --steady flag, which holds each plate still.
Although this flag keeps the prints sharper on thin paper, it can make each run several minutes longer.

## Fixes

The pedal no longer sticks after a cold start.
"""


def test_a_downside_the_documents_never_name_is_no_reason_to_refuse() -> None:
    """An evaluation is stated ("sharper, but longer") more often than named: the word's absence leaves the
    best passage as a weak answer, not a refusal."""
    doc = ask("What is the downside of the --steady flag?", units_of(PRESS))
    assert "--steady" in doc.answer
    assert doc.result.status == "insufficient"  # weak: the documents never write "downside"


def test_an_evaluation_question_asks_for_a_contrast_or_a_concession() -> None:
    kind = asked_kind("What is the downside of the --steady flag?", "entity")
    assert kind == (EVALUATION, "")
    question = "What is the downside of the --steady flag?"
    assert kind_said(*kind, "Although it keeps prints sharp, it makes each run longer.", question)
    assert kind_said(*kind, "Sharper prints, at the cost of a longer run.", question)
    assert not kind_said(*kind, "The press now accepts the --steady flag.", question)
    assert asked_kind("What is the default flag?", "entity") != kind
