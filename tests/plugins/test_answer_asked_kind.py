"""Golden tests of an honest status for questions whose answer is a kind of clause, not a shaped token
(issue 20 item 2), on a backup tool's guide written here. A passage may repeat a question's words and say
something else about them: a fact about the task for "how do I …" (nothing to do), a sentence under another
circumstance for "what happens if …" (no outcome of the asked condition), a property for "what is …" (not
what the thing is). Each is the best candidate, reported weak; the sentence that states the asked kind of
clause stays `success` (asked_kind.py)."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of

GUIDE = """# kestrel

## Overview

Kestrel supports Linux 5.10 and later kernels.

## Snapshots

Note that snapshot pruning in kestrel lags behind the schedule, but the nightly pruner (`--prune-nightly`) catches up quickly.

## Archives

To compress the kestrel archives, run `kestrel pack --zstd` in the archive directory.

## Queue

The `retry` hook adds a second job to the kestrel queue, to be run later, when the network is back.

## Uploads

If an upload of kestrel fails, the upload is retried twice and the operator is paged.
"""

DEFINED = GUIDE.replace(
    "Kestrel supports Linux 5.10 and later kernels.",
    "Kestrel is a backup scheduler for small servers. Kestrel supports Linux 5.10 and later kernels.",
)


@needs_model
def test_a_fact_about_the_task_is_not_an_instruction() -> None:
    doc = ask("How do I prune kestrel snapshots?", units_of(GUIDE, "guide.md"))
    assert "pruning" in doc.answer  # the same passage, reported as uncertain
    assert doc.result.status != "success"


@needs_model
def test_an_instruction_stays_success() -> None:
    doc = ask("How do I compress the kestrel archives?", units_of(GUIDE, "guide.md"))
    assert "kestrel pack --zstd" in doc.answer
    assert doc.result.status == "success"


@needs_model
def test_another_circumstance_is_no_outcome_of_the_asked_condition() -> None:
    doc = ask("What happens if a kestrel job in the queue fails?", units_of(GUIDE, "guide.md"))
    assert doc.result.status != "success"


@needs_model
def test_the_outcome_under_the_asked_condition_stays_success() -> None:
    doc = ask("What happens if an upload of kestrel fails?", units_of(GUIDE, "guide.md"))
    assert "retried twice" in doc.answer
    assert doc.result.status == "success"


@needs_model
def test_a_property_does_not_say_what_a_thing_is() -> None:
    doc = ask("What is kestrel?", units_of(GUIDE, "guide.md"))
    assert doc.result.status != "success"


@needs_model
def test_a_definition_stays_success() -> None:
    doc = ask("What is kestrel?", units_of(DEFINED, "guide.md"))
    assert "backup scheduler" in doc.answer
    assert doc.result.status == "success"
