"""A `success` needs the agreement of an independent view (gs_symbolic/agreement.py): when another section is
preferred both by the question's words alone and by MiniLM's meaning alone, the quoted passage rests on
neither, and the answer is the best candidate, weak (issue 20: a `success` about the wrong thing)."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of

RULES = """# Harbour club rules

## Enforcement

The stewards follow these steps when a member breaks the rules.

### 1. Notice

**Trigger**: Mooring a boat in a visitor's berth without asking.

**Consequence**: A written notice from the stewards, kept on file for a year.

### 2. Suspension

**Trigger**: Repeated mooring in visitors' berths, or leaving a fuel spill on the pontoon.

### 3. Expulsion

**Trigger**: Damaging another member's boat on purpose.

**Consequence**: Loss of membership and of the berth, without a refund of the annual fee.
"""


@needs_model
def test_an_entry_that_does_not_state_the_asked_item_is_not_success():
    # the suspension's entry states no consequence; before, its trigger was quoted with `success`
    doc = ask("What is the consequence of a Suspension?", units_of(RULES, "rules.md"))
    assert doc.result.status != "success"
    assert "preferred by both words and meaning" in (doc.result.evidence or "")


@needs_model
def test_an_entry_that_states_it_keeps_success():
    doc = ask("What is the consequence of an Expulsion?", units_of(RULES, "rules.md"))
    assert doc.result.status == "success"
    assert "Loss of membership" in (doc.answer or "")
    # a sibling item of the quoted entry is no rival: the same heading path
    doc = ask("What is the trigger of a Notice?", units_of(RULES, "rules.md"))
    assert doc.result.status == "success"
    assert "visitor's berth without asking" in (doc.answer or "")
