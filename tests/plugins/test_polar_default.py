"""Yes/No to a question about a default from the asked setting's stated default (issue 20: false refusals).

"Is the cache turned on by default?" over a configuration reference whose entry `enable-cache=` ends with
`Defaults to "no".`: no sentence states the proposition in the question's words ("turned on" is not
"enable"), and the entry's default value answers it, turned over when the question asks the negative. A
setting the reference never names is still refused, and a sentence that restricts ("By default only …") is
not read as either answer."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.polar_default import ASKS_DEFAULT
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

REFERENCE = """KITEWATCH.CONF(5)

NAME
       kitewatch.conf - configuration file of the kitewatch weather relay

SECTION [SERVER]
       listen-port= Takes a port number. The relay accepts station uploads on this port.
       Defaults to 7410.

       enable-cache= Takes a boolean value ("yes" or "no"). If set to "yes" the relay keeps the
       last hour of readings in memory and answers repeated queries from it. Defaults to "no".

       compress-archive= Takes a boolean value ("yes" or "no"). If set to "yes" the relay packs
       each day's readings into one archive file at midnight. Defaults to "yes".

SECTION [STATIONS]
       station-list= Takes a list of station names. By default only the first station of the
       list is polled when the relay starts.
"""


def _answer(question: str) -> str:
    return ask(question, units_of(REFERENCE, "kitewatch.conf.5.txt")).answer


def test_a_question_asks_a_default() -> None:
    assert ASKS_DEFAULT.search("Is the cache turned on by default?")
    assert not ASKS_DEFAULT.search("Is the cache turned on?")


@needs_model
def test_an_entrys_default_value_answers_a_paraphrase() -> None:
    answer = _answer("Is the reading cache turned on by default?")
    assert answer.startswith("No"), answer
    assert 'Defaults to "no"' in answer


@needs_model
def test_the_negative_question_is_turned_over() -> None:
    answer = _answer("Is the reading cache switched off by default?")
    assert answer.startswith("Yes"), answer


@needs_model
def test_a_true_default_answers_yes() -> None:
    answer = _answer("Are the daily readings packed into an archive by default?")
    assert answer.startswith("Yes"), answer
    assert 'Defaults to "yes"' in answer


@needs_model
def test_a_setting_never_named_is_refused() -> None:
    assert _answer("Is TLS encryption of uploads turned on by default?") == NO_CONTEXT_ANSWER


@needs_model
def test_a_restriction_is_not_read() -> None:
    answer = _answer("Are all stations polled at startup by default?")
    assert not answer.startswith("Yes"), answer
