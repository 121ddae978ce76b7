"""Golden tests on an FAQ written here, in a manual page's layout (issue 20): an entry whose heading names
all the question asks is read sentence by sentence (the whole entry is no answer), an agent noun compounded
with a thing ("credential manager") asks for a thing, and a yes/no question worded unlike the source is read
from the closest sentence unless one about as close says the opposite."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sdk.answer_types import expected_type
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

FAQ = """PANTRY-FAQ(7)                 Pantry Manual                 PANTRY-FAQ(7)

NAME
       pantry-faq - frequently asked questions about Pantry

USING
       How do I serve two teams from one cache?
           Each team needs its own namespace, so the administrator creates
           one namespace per team. Namespaces are created with pantry ns
           add NAME. Each namespace keeps its own download quota. Quotas are
           counted in gigabytes per day.

       How do I pin a package to an old version?
           Pantry doesn't provide a way to do this. The reason is that when
           Pantry refreshes its index, it cannot know whether an old version
           is still wanted.{therefore} Mirrors of other caches are refreshed every
           night.

       Where does Pantry keep tokens?
           Tokens are kept in the system keyring. On Debian hosts Pantry uses
           the secretstore credential manager.
"""

# a sentence of the other polarity, about as close to "is there a way to pin …" as the one that says no
SAFE_ROUTE = " Therefore, it takes the safe route and always fetches the newest release."


def units(therefore: str = ""):
    return units_of(FAQ.format(therefore=therefore), "pantry-faq.txt")


@needs_model
def test_an_entry_headed_by_the_question_is_answered_by_its_sentence_not_whole():
    doc = ask("How do I serve two teams from one cache?", units())
    assert "own namespace" in doc.answer
    # the quota sentences stand under the same heading but answer nothing asked
    assert "quota" not in doc.answer and "gigabytes" not in doc.answer
    assert not doc.answer.lstrip().startswith("-")  # quoted as prose, not as a list of the entry's lines


def test_an_agent_noun_compounded_with_a_thing_asks_for_a_thing():
    assert expected_type("Which credential manager does Pantry use?") == "entity"
    assert expected_type("Which package maintainer approved the upload?") == "entity"
    assert expected_type("Which maintainer approved the upload?") == "person"
    assert expected_type("Who approved the upload?") == "person"


@needs_model
def test_a_credential_manager_named_in_lower_case_answers_which_credential_manager():
    doc = ask("Which credential manager does Pantry use?", units())
    assert doc.result.status == "success"
    assert "secretstore credential manager" in doc.answer


@needs_model
def test_a_yes_no_question_is_read_from_the_clearly_closest_sentence():
    doc = ask("Is there a way to pin a package to an old version?", units())
    assert doc.answer.startswith("No.")
    assert "doesn't provide a way" in doc.answer
    assert doc.result.status != "success"  # a paraphrase's polarity is read, not proved: weak


@needs_model
def test_a_sentence_of_the_other_polarity_about_as_close_leaves_no_answer():
    doc = ask("Is there a way to pin a package to an old version?", units(SAFE_ROUTE))
    assert doc.result.status == "no-context"
    assert doc.answer == NO_CONTEXT_ANSWER
