"""A how-to question is not answered by a sentence that names its action only under a negation ("… without
changing its title" for "How do I change the title?"): gs_symbolic/action.py `negates`, issue 20 item 5."""

from __future__ import annotations

from answer_support import ask, needs_model, sentence_of, units_of
from mrpvm.plugins.gs_symbolic.action import asked_action, negates

NOTES = """# quill-note

## Options

### --rewrite

Replace the tip of the current branch by creating a new note. The new note has the same parents and author
as the current one.

### --keep-title

Use the selected note's title without launching an editor. For example, quill-note --rewrite --keep-title
amends a note without changing its title.
"""


def test_an_action_named_only_under_a_negation_is_negated():
    action = asked_action("How do I change the title of the last note?")
    assert action is not None and action.verb == "change"
    without = sentence_of("quill-note --rewrite --keep-title rewrites a note without changing its title.")
    never = sentence_of("The title is never changed by a rewrite.")
    contracted = sentence_of("A rewrite doesn't change the title.")
    done = sentence_of("Run quill-note --title to change the title of a note.")
    both = sentence_of("Plain rewrites do not change the title; quill-note --title changes it.")
    elsewhere = sentence_of("quill-note --rewrite --keep-title amends a note without changing its title.")
    far = sentence_of("Nothing is lost when you later decide to change the title.")
    assert negates(action, [without])
    assert negates(action, [never])
    assert negates(action, [contracted])
    assert not negates(action, [done])
    assert negates(action, [elsewhere])  # a synonym done to another object does not perform it
    assert not negates(action, [both])  # one mention outside the negation performs it
    assert not negates(action, [far])  # "Nothing" stands too far before the verb to govern it
    assert not negates(action, [without, done])


@needs_model
def test_a_negated_action_is_no_answer_to_how_to_do_it():
    doc = ask("How do I change the title of the last note?", units_of(NOTES, name="quill.md"))
    assert doc.result.status != "success"
    assert "without changing its title" not in doc.answer
