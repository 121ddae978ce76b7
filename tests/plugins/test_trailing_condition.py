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

BUCKETS = """# Quarry storage manual

## Creating a bucket

`quarry bucket create NAME` makes a new bucket for objects.

If a region name is given then the bucket is created in the named region. Otherwise it is created in the
home region. Archive buckets live in a region of their own, so a region name may not be given when creating
an archive bucket. The bucket name must differ from the name of any other bucket in the same region.

## Removing a bucket

`quarry bucket remove NAME` deletes an empty bucket.
"""

# the same manual without the case the question asks about
ONE_SIDED = BUCKETS.replace(" Otherwise it is created in the\nhome region.", "")
ASKED = "In which region is a bucket created when no region name is given?"


def test_a_trailing_condition_is_the_question_s_condition() -> None:
    assert trailing_condition("In which region is a bucket created when no region name is given?") is True
    assert trailing_condition("Which port does it use if I don't set one?") is True
    assert trailing_condition("What does the server reply when a job is ready?") is False
    assert trailing_condition("When was the region option added?") is None  # a wh-word, not a condition
    assert stated_condition("If omitted defaults to 30.") is True  # absence, as "if not given"


def test_otherwise_states_the_opposite_case() -> None:
    assert stated_conditions(["If a region is given, it is used.", "Otherwise the home region is."]) == [
        False,
        True,
    ]
    assert stated_conditions(["Otherwise the home region is."]) == [None]  # no case before it to oppose


def test_the_case_asked_is_answered_not_its_opposite() -> None:
    answer = ask(ASKED, units_of(BUCKETS))
    assert answer.result.status == "success"
    assert "home region" in answer.answer


def test_only_the_opposite_case_is_no_success() -> None:
    answer = ask(ASKED, units_of(ONE_SIDED))
    assert answer.result.status != "success"
