"""A question whose form asks for a value the documents never state is refused, not answered weakly: "What
is the default timeout?" over a reference that describes the timeout but names no default shares every word
with the timeout's entry, and the entry is still no answer; nor is "The default is 3.", which the ranking
prefers for the word "default" and which states the retries' default (another setting's). The answerable paraphrase over the same document
(the retries' default is stated) is answered, and so is a question about the same setting without a default.
A lack read less surely (an option or a place written in a way the answer-type test does not recognise, a
sentence announcing a command it does not quote) stays a weak answer."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.answer_form import NO_DEFAULT, NO_FILE, unanswered
from mrpvm.plugins.gs_symbolic.question import analyse
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

REFERENCE = """# brine settings

brine reads its settings from `/etc/brine.conf` when it starts.

## retries

Number of times brine retries an upload before it gives up on a mirror. The default is 3.

## timeout

How long brine waits for a mirror to answer before it tries the next mirror, in seconds. A slow mirror
is skipped for the rest of the run.

## colour

Whether brine colours its progress output. Set it to `always`, `never` or `auto`.
"""


def test_which_lacks_mean_the_evidence_does_not_say():
    number = analyse("How many seconds does brine wait for a mirror?", None, "", [], "", "")
    assert unanswered(number, NO_DEFAULT)
    assert unanswered(number, NO_FILE)
    assert unanswered(number, "no number stated beyond the question's own")
    option = analyse("Which option turns colours off?", None, "", [], "", "")
    assert not unanswered(option, "no option stated beyond the question's own")
    assert not unanswered(option, "announces what it does not quote")


@needs_model
def test_a_default_never_stated_is_refused():
    units = units_of(REFERENCE, "brine.md")
    for question in ("What is the default timeout?", "What is the default colour setting of brine?"):
        doc = ask(question, units)
        assert doc.result.status == "no-context", (question, doc.answer)
        assert doc.answer == NO_CONTEXT_ANSWER
        assert not doc.sources


@needs_model
def test_the_stated_default_and_the_undefaulted_setting_are_answered():
    units = units_of(REFERENCE, "brine.md")
    doc = ask("What is the default number of retries?", units)
    assert doc.result.status == "success"
    assert "The default is 3" in (doc.answer or "")
    doc = ask("What happens to a slow mirror?", units)
    assert "skipped for the rest of the run" in (doc.answer or "")
    doc = ask("Which file does brine read its settings from?", units)
    assert "/etc/brine.conf" in (doc.answer or "")
