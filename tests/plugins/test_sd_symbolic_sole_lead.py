"""A section that says one sentence and then shows a code block: the sentence is what the code does, and the
code stays with it, as it does after a lead-in ending with ':' (issue 20 item 4: a step keeps the command that
follows it). A sentence among others before the code keeps its own unit. Document invented.
"""

from __future__ import annotations

from answer_support import ask, units_of

KILN = """# Kiln controller

## Profiles

### Pinning the kiln profile

You can pin the kiln profile for every later firing in that workshop.

```shell
kilnctl profile pin --current --name=<profile-name>
```

### Listing profiles

Profiles are kept in the controller's memory. The controller keeps up to eight of them.

```shell
kilnctl profile list
```
"""


def test_a_sections_one_sentence_leads_its_code_block() -> None:
    units = [u for u in units_of(KILN, "kiln.md") if u.kuType == "atomic"]
    pin = [u for u in units if "kilnctl profile pin" in (u.claim or "")]
    assert pin and "You can pin the kiln profile" in (pin[0].claim or ""), [u.claim for u in units]
    listed = [u for u in units if "kilnctl profile list" in (u.claim or "")]
    assert listed and "eight" not in (listed[0].claim or "")  # two sentences before it: not a sole lead


def test_the_how_to_answer_quotes_the_command() -> None:
    doc = ask("How do I pin the kiln profile for every later firing?", units_of(KILN, "kiln.md"))
    assert doc.answer is not None and "kilnctl profile pin" in doc.answer, doc.answer
