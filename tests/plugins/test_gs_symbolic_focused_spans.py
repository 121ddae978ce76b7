"""The span an answer quotes holds the sentences that answer and nothing else, at any length:
- a table row whose description states the asked default in one of its sentences quotes that sentence
  under the row's key (the rest of the description answers another question);
- a short passage that refers back is shortened like a long one, since it is quoted with its antecedent."""

from __future__ import annotations

from answer_support import ask, units_of

SPOOL_TABLE = """# Reel options

| Option | Description |
|---|---|
| `spool` | The optional clause `SPOOL BY frames` sets how many frames the reel buffers before playback. A larger value smooths playback on slow disks. The default value is 4. |
| `reach` | The optional clause `REACH n` sets how far the reel seeks ahead. The default value is 12. |
"""

RELAY_NAMES = """# Relay naming

## Names and lanes

Every relay you create gets an address in the lane registry.
This address is of the form `relay.lane.grid.example`, which means that a relay using only its short name
reaches the relay of its own lane.
This is useful for reusing the same settings in several lanes such as Amber and Teal.
If you want to reach across lanes, you need to use the full grid address.
"""


def test_a_row_quotes_the_sentence_that_states_the_asked_default() -> None:
    doc = ask("What is the default spool of a reel?", units_of(SPOOL_TABLE, name="reel.md"))
    answer = doc.answer
    assert "The default value is 4." in answer and "`spool`" in answer
    assert "smooths playback" not in answer and "SPOOL BY" not in answer  # another question's sentences
    assert "12" not in answer  # the other row's default


def test_a_row_whose_sentences_state_no_default_is_quoted_whole() -> None:
    doc = ask("What does the spool option set?", units_of(SPOOL_TABLE, name="reel.md"))
    assert "how many frames the reel buffers" in doc.answer


def test_a_passage_that_refers_back_is_shortened_to_the_sentence_that_answers() -> None:
    doc = ask("How do you reach a relay across lanes?", units_of(RELAY_NAMES, name="relay.md"))
    answer = doc.answer
    assert "you need to use the full grid address" in answer
    assert "This is useful" not in answer and "This address is of the form" not in answer


LIBRARY_RULES = """# Library rules

## Lapses

1. Late return: **Effect**: Other readers wait longer for the book they reserved at the front desk.
   **Penalty**: A fine of two coins for each day, paid at the front desk.
2. Lost book: **Effect**: The shelf keeps a gap until a new copy arrives from the binder.
   **Penalty**: The full price of the book and a handling fee of five coins.
"""


def test_a_record_of_labelled_fields_quotes_the_asked_field() -> None:
    doc = ask("What is the penalty for a late return?", units_of(LIBRARY_RULES, name="library.md"))
    answer = doc.answer
    assert "A fine of two coins for each day" in answer
    assert "Other readers wait" not in answer and "full price" not in answer


def test_labelled_fields_are_read_only_where_labels_stand() -> None:
    from mrpvm.plugins.gs_symbolic.asked_kind import (
        asked_attribute,
        field_named,
        labelled_fields,
        labels_attribute,
    )

    assert asked_attribute("What is the penalty for a late return?") == "penalty"
    assert asked_attribute("How do I return a book?") == ""
    text = "Late return: **Effect**: readers wait. **Penalty**: a fine."
    assert [label for label, _, _ in labelled_fields(text)] == ["Late return", "Effect", "Penalty"]
    start, end = field_named(labelled_fields(text), "penalty") or (0, 0)
    assert text[start:end] == "**Penalty**: a fine."
    # a colon inside a sentence is no label; nor is a long phrase before one
    assert not labels_attribute("The rule says penalty: a fine.", "penalty")
    assert not labels_attribute("**The penalty that applies to late returns of books**: a fine.", "penalty")
    assert labelled_fields("No labels here.") == []


def test_a_relative_link_is_quoted_as_its_text_an_absolute_one_whole() -> None:
    from mrpvm.plugins.gs_symbolic.render import as_sentence

    quoted = as_sentence(
        "Each [relay](/docs/relays/) joins a [lane](lanes.md#joining); see [the grid](https://grid.example/a)"
        " and ![a map](map.png) or [the top](#top)."
    )
    assert quoted == (
        "Each relay joins a lane; see [the grid](https://grid.example/a) and ![a map](map.png) or the top."
    )
