"""Yes/No questions whose statement is worded in another voice or with "without" (gs-symbolic polarity.py,
qualifiers.py; issue #20): "Is a password required to …?" is stated by "Reading … does not require a
password" (the question's subject is the active clause's object), and "takes effect without a restart"
says No to "Do I need to restart …?". Before, the first was refused and the second answered Yes. Likewise a
subject that opens with a word that may be a command ("Pull requests must …" is no command to pull) and a
predicate's opposite ("optional" answers No to "required?")."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.propositions import asks_passive
from mrpvm.protocol.document import CnlDocument

RULES = """# Beacon kiosk rules

## Access

Browsing the map does not require a badge.
Visitors may print up to three pages a day.

## Settings

Changes to the kiosk settings take effect without a reboot.

## Reports

Print jobs must include a cover page.
Receipts are optional for short sessions.
"""


def solve(question: str) -> CnlDocument:
    return ask(question, units_of(RULES, "kiosk.md", "kiosk"))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Is a badge required to browse the map?", "No."),
        ("Do I need to reboot the kiosk after changing its settings?", "No."),
        ("Can I browse the map without a badge?", "Yes."),
        ("Must print jobs include a cover page?", "Yes."),
        ("Are receipts required for short sessions?", "No."),
    ],
)
def test_a_statement_in_another_voice_or_with_without_answers(question: str, answer: str) -> None:
    doc = solve(question)
    assert doc.result.status in ("success", "insufficient"), doc.answer
    assert doc.answer.startswith(answer), doc.answer


def test_a_passive_question_about_what_is_not_stated_is_refused() -> None:
    doc = solve("Is a badge required to print pages?")
    assert doc.result.status == "no-context", doc.answer


def test_what_reads_as_passive() -> None:
    assert asks_passive("Is a password required to read the catalogue")
    assert asks_passive("Are logs stored by the server")
    assert not asks_passive("Is the catalogue open")
    assert not asks_passive("Is it worth reading")
