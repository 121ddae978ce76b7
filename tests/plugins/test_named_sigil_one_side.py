"""A variable written with its sigil on one side only is the same variable (gs_symbolic/named.py): a manual
describes `KESTREL_VAULT` where it lists the environment and writes `$KESTREL_HOME` where a command reads it;
a question may write either form. Read as different tokens, the question's name was "written by no evidence"
and the question was refused though the manual answers it. Two different sigils still name two things
(Perl's `$x` and `@x`)."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.named import written_identifiers
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

MANUAL = """# kestrel - hourly volume snapshots

## Environment

KESTREL_VAULT
:   The directory that holds the snapshots. The default is /var/lib/kestrel.

KESTREL_KEEP_DAYS
:   How many days a snapshot is kept before `kestrel prune` deletes it. The default is 30.

KESTREL_QUIET
:   When set, `kestrel` prints nothing but errors. It is unset by default.

## Files

The configuration file is read from `$KESTREL_HOME/kestrel.conf`, where `$KESTREL_HOME` defaults to
`~/.config/kestrel`.

## Exit status

`kestrel` exits with 0 when every snapshot was taken, and with 2 when the vault is full.
"""


def test_the_question_writes_the_name_with_or_without_its_sigil():
    assert written_identifiers("What is the default of $KESTREL_VAULT?") == ["$KESTREL_VAULT"]
    assert written_identifiers("What is KESTREL_HOME set to by default?") == ["KESTREL_HOME"]


@needs_model
def test_a_sigil_on_one_side_only_names_the_same_variable():
    units = units_of(MANUAL, "kestrel.md")
    doc = ask("What is the default value of $KESTREL_VAULT?", units)  # before: refused
    assert "/var/lib/kestrel" in (doc.answer or ""), doc.answer
    doc = ask("What is KESTREL_HOME set to by default?", units)  # before: refused
    assert "~/.config/kestrel" in (doc.answer or ""), doc.answer


@needs_model
def test_another_sigil_or_an_unwritten_name_is_still_refused():
    units = units_of(MANUAL, "kestrel.md")
    for question in (
        "What is the default value of @KESTREL_HOME?",
        "What is the default value of $KESTREL_CACHE?",
    ):
        assert ask(question, units).answer == NO_CONTEXT_ANSWER, question
