"""Golden tests of an honest status (issue 20, item 2) on a document written here: `success` only when the
quoted answer states what the question's form asks for (answer_form.py). Each question is asked of the
intact document (retrieval by kb-balanced, as a turn does), where it is answered with `success`, and of the document without the words that answer it,
where what remains repeats the question's words without the asked detail: never `success` there."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.protocol.document import CnlDocument

BRINE = """# brine

brine uploads files to a remote spool.

## Options

### --retries=N

Number of times brine retries a failed upload. The default is 3.

### --spool=DIR

Directory where brine keeps partial uploads. By default brine uses `/var/spool/brine`.

### --fast

--fast skips the checksum of each chunk.

### --safe

--safe verifies every chunk after the upload.

### --level=N

Compression level of each chunk, as in brine 2.4.1.

## Files

Upload failures are logged to `/var/log/brine.fail` in JSON format.

## Install

To install brine on Linux, run this command:

```
pip install brine
```
"""


def solve(question: str, story: str) -> CnlDocument:
    return ask(question, units_of(story, "brine.md", "brine"))


# (question, a word of the right answer, the text that holds it, what is left when it is removed)
CASES = [
    # a quantity named ("Number of times …") is not a figure stated
    ("How many times does brine retry a failed upload?", "3", " The default is 3.", ""),
    # the default asked for: the sentence that says what the default is
    (
        "What is the default spool directory?",
        "/var/spool/brine",
        " By default brine uses `/var/spool/brine`.",
        "",
    ),
    # "which file": a file named, not "here"
    ("Which file are upload failures logged to?", "brine.fail", "to `/var/log/brine.fail`", "here"),
    # "run this command:" without the command it announces tells nothing to run
    ("How do I install brine on Linux?", "pip install brine", "```\npip install brine\n```\n", ""),
    # a comparison of which one side is only named is no comparison
    (
        "What is the difference between --fast and --safe?",
        "verifies",
        "--safe verifies every chunk after the upload.",
        "Use --safe.",
    ),
]


@pytest.mark.parametrize(("question", "answer", "held", "left"), CASES)
def test_an_answer_is_success_only_while_the_document_states_what_was_asked(
    question: str, answer: str, held: str, left: str
) -> None:
    intact = solve(question, BRINE)
    assert intact.result.status == "success", intact.answer
    assert answer in intact.answer
    assert held in BRINE
    removed = solve(question, BRINE.replace(held, left))
    assert removed.result.status != "success", removed.answer
    assert answer not in removed.answer


def test_a_release_number_is_no_figure_for_how_many() -> None:
    # "as in brine 2.4.1" is a release, not the level asked for: never `success`
    doc = solve("What is the maximum compression level?", BRINE)
    assert doc.result.status != "success", doc.answer


def test_a_question_is_not_answered_by_its_own_number() -> None:
    # the version the question writes is no answer to which version it asks for
    story = BRINE + "\n## Changes\n\n### 2.4.1\n\nbrine 2.4.1 raised the minimum Python version.\n"
    doc = solve("Which minimum Python version does brine 2.4.1 need?", story)
    assert doc.result.status != "success", doc.answer


TIDY = """# tidy — text helpers

## Functions

### trim(text)

Remove trailing blanks from every line in *text*.

### pad(text, width)

Return *text* padded on the right with spaces up to *width* characters.
"""


@needs_model
def test_a_passage_restating_the_whole_question_needs_less_closeness_in_meaning() -> None:
    # every word of the question is stated, and the model finds the sentence only moderately alike (0.43):
    # under SEM_SUPPORT, over SEM_FULL
    doc = ask("What does pad return?", units_of(TIDY, "tidy.md", "tidy"))
    assert doc.result.status == "success", (doc.result.evidence, doc.answer)
    assert "padded on the right" in doc.answer
