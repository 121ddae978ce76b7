"""A condition a question sets after what it asks (session 23): "In which region is a bucket created when no
region is given?" asks about the case without a region, as "If no region is given, where …?" does. Read only
when it led the question, the trailing condition was ignored: "If a region is given then the bucket is created
in that region." (the opposite case) was the answer, `success`. A sentence opening "Otherwise" states the case
opposite to the condition before it, so "… Otherwise it is created in the account's home region." answers the
negated case; and "If omitted" is a condition on a thing's absence, as "if I don't set it" is.
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.directives import stated_condition, stated_conditions, trailing_condition
from mrpvm.plugins.sdk.text import terms

BUCKETS = """# Quarry storage manual

## Creating a bucket

`quarry bucket create NAME` makes a new bucket for objects.

If a region name is given then the bucket is created in the named region. Otherwise it is created in the
home region. Archive buckets live in a region of their own, so a region name may not be given when creating
an archive bucket. The bucket name must differ from the name of any other bucket in the same region.

## Removing a bucket

`quarry bucket remove NAME` deletes an empty bucket.
"""

ASKED = "In which region is a bucket created when no region name is given?"


def test_a_trailing_condition_is_the_question_s_condition() -> None:
    asked = trailing_condition("In which region is a bucket created when no region name is given?")
    assert asked is not None and asked.negated and {"region", "name"} <= asked.about
    negated = trailing_condition("Which port does it use if I don’t set one?")  # a typographic apostrophe
    assert negated is not None and negated.negated
    plain = trailing_condition("What does the server reply when a job is ready?")
    assert plain is not None and not plain.negated
    assert trailing_condition("When was the region option added?") is None  # a wh-word, not a condition
    assert stated_condition("If omitted defaults to 30.") is True  # absence, as "if not given"


def test_otherwise_states_the_opposite_case_of_the_same_thing() -> None:
    about = frozenset(terms("no region name is given"))
    given, otherwise = stated_conditions(
        ["If a region is given, it is used.", "Otherwise the home one is."], about
    )
    assert given is not None and not given.negated
    assert otherwise is not None and otherwise.negated and otherwise.inferred
    # no case before it to oppose, or a case about another thing ("If it is set" after a sentence on TAPE)
    assert stated_conditions(["Otherwise the home region is."], about) == [None]
    assert stated_conditions(["If it is set, it is read.", "Otherwise the default is."], about)[1] is None


def test_the_case_asked_is_answered_not_its_opposite() -> None:
    answer = ask(ASKED, units_of(BUCKETS))
    assert answer.result.status == "success"
    assert "home region" in answer.answer
