"""A how-to question asking that something not happen: "How do I stop X from using Y?" (issue 20).

"How do I stop Avahi from using IPv6?" was refused over "If set to "no" avahi-daemon will not use IPv6
sockets.": the action read was "stop" on "Avahi", which the passage never performs, and it states nothing to
do. "stop / prevent / keep / block X from <verb>ing Y" asks for X *not* to do the verb on Y: a sentence
naming the verb (or a synonym) under a negation ("will not use") answers it, under the condition it states.
A passage where X does it without a negation stays refused."""

from __future__ import annotations

from answer_support import solve_question, units_of
from mrpvm.plugins.gs_symbolic.action import asked_action
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

CONF = """# sift.conf

The sift relay reads its settings from `/etc/sift.conf` at start.

## `use-tls=`

Takes a boolean value ("yes" or "no"). If set to "no" the sift relay will not use TLS connections to its
peers. Default is "yes".

## `cache-replies=`

The sift relay caches every reply of a peer for 60 seconds.
"""


def _ask(question: str) -> str:
    return solve_question(question, units_of(CONF, "sift.md")).answer or ""


def test_the_prevented_action_is_read_negated() -> None:
    action = asked_action("How do I stop the sift relay from using TLS?")
    assert action is not None and action.stem == "stop" and action.prevented is not None
    assert action.prevented.stem == "use" and {"sift", "relay", "tls"} <= action.prevented.target
    kept = asked_action("How can I prevent git from rewriting the line endings?")
    assert kept is not None and kept.prevented is not None
    assert {"git", "line", "end"} <= kept.prevented.target
    plain = asked_action("How do I stop the relay?")
    assert plain is not None and plain.prevented is None and plain.stem == "stop"


def test_a_sentence_saying_it_does_not_happen_answers() -> None:
    answer = _ask("How do I stop the sift relay from using TLS?")
    assert "will not use TLS" in answer, answer


def test_an_action_stated_without_negation_stays_refused() -> None:
    assert _ask("How do I stop the sift relay from caching replies?") == NO_CONTEXT_ANSWER
