"""Asked what the reader should do ("Should I send …?"), a command in a parenthetical answers: "You may
see drift warnings (please don't send these to the manufacturer, …)" is No, though the clause around it,
a hedged statement, carries more of the question's words (gs_symbolic polarity `_stating_clause`;
session 20: a parenthetical was always cut before the stating clause was chosen, so the question was
refused or read as "Possibly"). A parenthetical that is no command still does not cut its clause.

Golden cases written for these tests (no story of the eval suites), asked as a turn does (answer_support).
"""

from __future__ import annotations

from answer_support import ask, units_of

LOG = """Kiln firing log
===============

After a long firing you may see drift warnings from the thermocouple in the firing log (please don't
send these to the manufacturer, they are normal), but the firing itself is fine.

When the door seal warning appears, the seal (a braided fibre rope) must be replaced before the next
firing.
"""

BUG = LOG.replace("(please don't\n", "(please\n")


def test_a_command_in_a_parenthetical_answers_what_the_reader_should_do():
    doc = ask("Should I send the thermocouple drift warnings to the manufacturer?", units_of(LOG, "log.rst"))
    assert (doc.answer or "").startswith("No."), doc.answer
    doc = ask("Should I send the thermocouple drift warnings to the manufacturer?", units_of(BUG, "log.rst"))
    assert (doc.answer or "").startswith("Yes."), doc.answer


def test_a_parenthetical_that_commands_nothing_does_not_cut_its_clause():
    doc = ask("Must the door seal be replaced before the next firing?", units_of(LOG, "log.rst"))
    assert (doc.answer or "").startswith("Yes."), doc.answer
