"""The action a how-to question asks about is read past an adverb before its verb (gs_symbolic/focus.py
HOW_VERB): "How can I *simply* delete old snapshots?" asks how to delete, and "simply" is no action the
documents must know. Read as the action, the adverb was a focus word the manual never writes (so the answer
could not be `success`), and the instruction check looked for a "simply" the sentences never perform."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.action import asked_action
from mrpvm.plugins.gs_symbolic.focus import action_verb, focus_words

MANUAL = """Kestrel snapshots
=================

Kestrel takes a snapshot of the volume every hour and keeps it in the vault.

Deleting snapshots
------------------

To delete old snapshots, run ``kestrel prune --older-than 30d``. The vault keeps the newest snapshot
whatever its age.

Restoring a snapshot
--------------------

To restore a snapshot, run ``kestrel restore`` with the snapshot's number.
"""


def test_the_asked_action_is_the_verb_after_the_adverb():
    assert action_verb("How can I simply delete old snapshots?") == "delete"
    assert action_verb("How do I first restore a snapshot?") == "restore"
    assert action_verb("How to just apply the patch?") == "apply"
    assert "simply" not in focus_words("How can I simply delete old snapshots?")
    action = asked_action("How can I simply delete old snapshots?")
    assert action is not None and action.verb == "delete" and action.words == ("old", "snapshots")
    assert action_verb("How do I apply patches?") == "apply"  # a verb ending in -ly is still the verb


@needs_model
def test_an_adverb_before_the_verb_does_not_weaken_the_answer():
    units = units_of(MANUAL, "kestrel.rst")
    plain = ask("How can I delete old snapshots?", units)
    assert plain.result.status == "success", plain.answer
    doc = ask("How can I simply delete old snapshots?", units)
    assert doc.result.status == "success", doc.answer  # before: refused ("simply" read as the action)
    assert "kestrel prune" in (doc.answer or ""), doc.answer
