"""gs-symbolic reports how far each view alone (the question's words, MiniLM's meaning) prefers the section it
quotes over the best other section (gs_symbolic/agreement.py), for bench/status_features.py: an entry that
does not state the asked item is behind another section in both; one that states it leads in both, and a
sibling item under the same heading is no rival."""

from __future__ import annotations

import re

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


_LEADS = re.compile(r"(meaning|words) lead (-?\d\.\d+)")


def leads(question: str) -> dict[str, float]:
    doc = ask(question, units_of(RULES, "rules.md"))
    return {view: float(v) for view, v in _LEADS.findall(doc.result.evidence or "")}


@needs_model
def test_an_entry_that_does_not_state_the_asked_item_is_behind_in_both_views():
    # the suspension's entry states no consequence: its trigger is quoted, other sections state consequences
    found = leads("What is the consequence of a Suspension?")
    assert set(found) == {"meaning", "words"}
    assert found["meaning"] < 0 and found["words"] < 0


@needs_model
def test_an_entry_that_states_it_leads_in_both_views():
    found = leads("What is the consequence of an Expulsion?")
    assert found["meaning"] > 0 and found["words"] > 0
    # the notice's consequence (same heading, another unit) is no rival to its trigger
    found = leads("What is the trigger of a Notice?")
    assert found["meaning"] > 0 and found["words"] > 0
