"""Follow-up questions are rewritten against what the conversation named (sd-symbolic turn seeds)."""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.turn_seeds.followups import antecedent, named_things, resolve


def test_a_possessive_pronoun_becomes_the_attribute_of_the_earlier_subject():
    earlier = ["How do I keep an SSH connection alive with ServerAliveInterval?"]
    assert resolve("What is its default?", earlier) == "What is the default of ServerAliveInterval?"
    assert resolve("Is it applied on extraction?", ["What does the -x option of tar do?"]) == (
        "Is -x applied on extraction?"
    )


def test_the_newest_question_decides_and_a_question_naming_its_subject_is_kept():
    # the previous question was about something unnamed: no guess from older turns
    assert resolve("Where are they written?", ["How long are snapshots kept?", "What does --keep do?"]) == (
        "Where are they written?"
    )
    # a question that itself points back passes the search on to the one before it
    assert antecedent(["What is its default?", "What does `--max-time` do?"]) == "--max-time"
    assert resolve("What does --port do?", ["What does --keep do?"]) == "What does --port do?"
    assert resolve("What is its default?", []) == "What is its default?"


def test_identifiers_come_before_capitalised_names():
    assert named_things("On Debian, what does ServerAliveInterval do?") == ["ServerAliveInterval", "Debian"]
    assert named_things("Use `git commit --amend` or -m") == ["git commit --amend", "-m"]
