"""The sentence that holds what the question asks, inside the right passage (issue 20 items 4-5).

- A yes/no question about an action ("Can Pixvault keep …?") is answered from the sentence that carries the
  asked verb, not from its neighbour that shares every other word and says something else ("… will drop the
  preview data"); the verb's sentence may take the proposition's other words from the statement before it
  (gs_symbolic/polarity.py, polar_verb.py).
- A sentence that opens with a pro-verb ("Doing so …") refers to the statement before it even across a
  one-word sentence ("Careful!"), and is quoted after it (evidence.py, polar_verb.referred).
- "How do I set a different limit …" asks how to set a limit: "different" says which one, as "same" does, and
  is no word the instruction must repeat (action.py).
The documents are invented."""

from __future__ import annotations

from answer_support import ask, needs_model, sentence_of, units_of
from mrpvm.plugins.gs_symbolic import definiendum
from mrpvm.plugins.gs_symbolic.action import asked_action
from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.plugins.sdk.text import terms

GALLERY = """# Pixvault

## Albums

Pixvault syncs photo albums between a camera card and a desktop library.

## Previews

Pixvault makes a small preview of every photo while it syncs. Also, for previews of deleted albums, if an
album is deleted before the sync finishes, Pixvault will drop the preview data and the gallery will show
empty tiles. If you use the option --retain-previews=yes, then Pixvault will keep the preview data so that
the tiles stay filled, at the price of more disk space.
"""

STORE = """# Quillstore

## Imports

Quillstore imports CSV and JSON files into its tables.

## Write buffer

You can make Quillstore flush every row to disk at once by turning off the write buffer. Careful! Doing so
will probably slow down your imports, sometimes a lot.
"""

ROUTER = """# Portcullis

## Limits

Portcullis counts the requests of every client against one limit of 100 requests a minute.

## Rules

A rule of a route may be written as a route pattern followed by its own settings. To give one route its own
request limit, put a `limit = 20` line under that route's `[route "/upload"]` heading.
"""


@needs_model
def test_the_yes_no_answer_quotes_the_sentence_with_the_asked_verb():
    doc = ask("Can Pixvault keep the preview data of deleted albums?", units_of(GALLERY, "pixvault.md"))
    assert doc.answer.startswith("Yes.")
    assert (
        "--retain-previews=yes" in doc.answer
    )  # main 9c8017f: the "will drop the preview data" sentence, weak
    assert "drop the preview data" not in doc.answer
    assert doc.result.status == "success"


@needs_model
def test_a_pro_verb_after_a_one_word_sentence_refers_to_the_statement_before():
    doc = ask("Does turning off the write buffer slow down the imports?", units_of(STORE, "quillstore.md"))
    # main 9c8017f: "Yes. You can make Quillstore flush …" (a sentence without the asked verb), weak
    assert doc.answer.startswith(
        "Possibly."
    )  # "will probably slow down": hedged, said as the sentence says it
    assert "Doing so will probably slow down your imports" in doc.answer
    assert "turning off the write buffer" in doc.answer  # what "Doing so" does, quoted before it


def test_a_one_word_sentence_is_no_antecedent():
    sentences = {s.text: s for s in split_units(units_of(STORE, "quillstore.md"))}
    doing = next(s for text, s in sentences.items() if text.startswith("Doing so"))
    assert set(terms("turning off the write buffer")) <= doing.carried  # main 9c8017f: "Careful!" only


def test_different_says_which_object_not_what_it_is():
    action = asked_action("How do I set a different request limit for one route?")
    assert action is not None
    assert action.target == frozenset(
        terms("request limit")
    )  # main 9c8017f: "different" read as a word of it
    other = asked_action("How do I set the other limit?")
    assert other is not None and other.target == frozenset(terms("limit"))


@needs_model
def test_a_how_to_asking_a_different_value_is_answered_by_the_instruction():
    doc = ask("How do I set a different request limit for one route?", units_of(ROUTER, "portcullis.md"))
    assert "limit = 20" in doc.answer


@needs_model
def test_the_verb_sentence_gives_the_polarity_and_without_it_the_answer_stays_weak():
    kept = GALLERY.replace(
        "If you use the option --retain-previews=yes, then Pixvault will keep", "Pixvault never keeps"
    )
    kept = kept.replace(
        "so that\nthe tiles stay filled, at the price of more disk space", "of a deleted album"
    )
    doc = ask("Can Pixvault keep the preview data of deleted albums?", units_of(kept, "pixvault.md"))
    assert doc.answer.startswith("No.") and "never keeps" in doc.answer
    dropped = GALLERY.split("If you use the option")[0]
    doc = ask("Can Pixvault keep the preview data of deleted albums?", units_of(dropped, "pixvault.md"))
    assert doc.result.status != "success"  # the proposition's words without its verb: weak at most, as before


ADVISORY = """# Fetchy security advisory

## Summary

Fetchy can be tricked by a hostile server into overwriting a local file when `-Q` and `-k` are used together.

## Details

The command line tool offers the `-Q` option that stores a download under the name the server's
`X-Suggested-Name` header gives. Users should never run fetchy with the `-Q` option in their home directory
or any other sensitive directory, whatever the version.
"""


def test_a_relative_clause_after_the_asked_subject_says_what_it_does():
    subject = definiendum.asked_subject("What does the -Q option do?")
    says = sentence_of("The command line tool offers the `-Q` option that stores a download under its name.")
    warns = sentence_of("Users should never run fetchy with the `-Q` option in their home directory.")
    assert definiendum.relates(subject, says)  # main 9c8017f: no such reading
    assert not definiendum.relates(subject, warns)


@needs_model
def test_what_an_option_does_is_the_sentence_that_says_it_not_a_warning_about_it():
    doc = ask("What does the -Q option do?", units_of(ADVISORY, "advisory.md"))
    assert "X-Suggested-Name" in doc.answer  # main 9c8017f: "Users should never run fetchy with the `-Q` …"
