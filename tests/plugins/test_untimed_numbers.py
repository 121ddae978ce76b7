"""A question that asks for a measure no span of time states ("Which port …", "What size …") is not
answered by a sentence whose only number is a duration or a manual reference (issue 20: an unanswerable
question refused despite word overlap; a new user's "Which port does ssh use for the X11 display?" was
answered `success` from "… set to expire after 20 minutes")."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.embedding import available
from mrpvm.plugins.sdk.time_answers import asks_untimed_number, mentions_untimed_number
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

WITHOUT_PORT = """# relayd

## Display forwarding

When display forwarding is trusted (the default), remote clients get full access to the local display.
The xauth(1) token used for the session expires after 20 minutes.
"""

WITH_PORT = (
    WITHOUT_PORT
    + """
## Listening

By default relayd listens for display forwarding on port 6010.
"""
)


def test_which_measures_a_duration_cannot_answer():
    assert asks_untimed_number("Which port does relayd use for display forwarding?")
    assert asks_untimed_number("What is the default size of the cache?")
    assert not asks_untimed_number("How many seconds does relayd wait?")  # a duration may answer
    assert not asks_untimed_number("What is the maximum number of retries?")
    assert not asks_untimed_number("Which version added display forwarding?")


def test_a_number_outside_durations_and_manual_references():
    assert not mentions_untimed_number("The xauth(1) token expires after 20 minutes.")
    assert not mentions_untimed_number("It waits a day, or three hours when forced.")
    assert mentions_untimed_number("It listens on port 6010, see ssh(1).")
    assert mentions_untimed_number("The cache holds 512 entries.")


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_a_port_question_is_refused_over_a_duration_and_answered_by_the_port():
    question = "Which port does relayd use for display forwarding by default?"
    refused = ask(question, units_of(WITHOUT_PORT, "relayd.md"))
    assert refused.answer == NO_CONTEXT_ANSWER
    answered = ask(question, units_of(WITH_PORT, "relayd.md"))
    assert "6010" in answered.answer
