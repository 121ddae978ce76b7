"""Follow-up questions are rewritten against what the conversation named (sd-symbolic turn seeds)."""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.turn_seeds.detect import detect_intents
from mrpvm.plugins.sd_symbolic.turn_seeds.followups import antecedent, named_things, resolve
from mrpvm.protocol.envelope import DetectSeedsPayload


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


def test_a_pronoun_after_a_statement_of_the_same_turn_points_into_it_not_to_an_earlier_turn():
    history = ["What does the -aux option of ps print?"]
    prompt = (
        "Several processes in my ps listing are marked <defunct> and never go away. "
        "What are they, and how will they eventually be cleaned up?"
    )
    seeds = detect_intents(prompt, DetectSeedsPayload(history=history), "t1", "2026-01-01T00:00:00Z")
    intents = [group.intent for group in seeds.intents]
    assert len(intents) == 2
    assert all("-aux" not in text for text in intents), intents
    assert "What are they?" in intents[0] and "How will they eventually be cleaned up?" in intents[1]
    # without the statement the same question still points back to the earlier turn
    alone = detect_intents(
        "What are they?", DetectSeedsPayload(history=history), "t2", "2026-01-01T00:00:00Z"
    )
    assert alone.intents[0].intent == "What are -aux?"


def test_a_word_capitalised_only_because_it_opens_a_sentence_is_no_antecedent():
    assert antecedent(["Several processes are marked <defunct>."]) is None
    assert antecedent(["Mara Holt founded the guild."]) == "Mara Holt"
    assert antecedent(["How old is Kiln?"]) == "Kiln"


def test_a_pronoun_after_a_noun_phrase_of_its_own_question_is_not_sent_back_to_an_earlier_turn():
    earlier = ["What does the --keep option do?"]
    # "it" follows "a record", "the nobody user" and a path in its own question: it is kept as it is
    local = "Will nss-systemd synthesize a record for the nobody user if /etc/passwd does not list it?"
    assert resolve(local, earlier) == local
    assert resolve("Does the server restart when it crashes?", earlier) == (
        "Does the server restart when it crashes?"
    )
    assert resolve("Is the default port fixed, or can its value change?", earlier) == (
        "Is the default port fixed, or can its value change?"
    )
    assert resolve("Must reviewers sign their commits?", earlier) == "Must reviewers sign their commits?"
    # an expletive "it" refers to nothing
    assert resolve("How long does it take for a fix to ship?", earlier) == (
        "How long does it take for a fix to ship?"
    )
    assert resolve("Is it safe to delete the cache?", earlier) == "Is it safe to delete the cache?"
    assert resolve("How long does it take?", earlier) == "How long does --keep take?"
    # the subject of its own clause does not bind a plain pronoun, nor a noun of another number a possessive
    assert resolve("Does the daemon restart it?", earlier) == "Does the daemon restart --keep?"
    assert resolve("Do users need its output?", earlier) == "Do users need the output of --keep?"
    assert resolve("Is it set to true by default?", earlier) == "Is --keep set to true by default?"
    # nothing precedes the pronoun: it still points back
    assert resolve("Is it enabled by default?", earlier) == "Is --keep enabled by default?"
    assert resolve("What is its default?", earlier) == "What is the default of --keep?"
