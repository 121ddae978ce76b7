"""An option named by the noun that says it is one answers "which option …" (issue 20: false refusals with
the evidence in hand).

A build macro, a configuration key or a program's setting has no shape of its own (a command-line option
has: `-x`, `--long`), so "Which compile-time option enables zfold()?" was refused over "It is only available
if the QZ_ENABLE_ZFOLD compile-time option is used …": no sentence carried an option's shape. The sentence
names one by the kind noun beside an identifier ("the <name> [<modifier>] option", "the option <name>"); a
function the documents give no option for stays refused, and "the default option" names nothing."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.option_named import named_options, names_option
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

REFERENCE = """# quartzdb scalar functions

quartzdb ships a small set of scalar functions for its query language.

## zfold(X)

The zfold(X) function returns X with every letter folded to its base form. It is only available if the
QZ_ENABLE_ZFOLD compile-time option is used when quartzdb is built. The zfold(X) function returns NULL if X
is NULL.

## zwrap(X, N)

The zwrap(X, N) function returns X broken into lines of at most N characters. If N is omitted, lines of 72
characters are made.

## zpad(X, N)

The zpad(X, N) function returns X padded with spaces on the right to N characters. Run the shell with
`--strict` to make zpad() fail on a negative N.
"""


def _ask(question: str) -> str:
    return ask(question, units_of(REFERENCE, "functions.md")).answer or ""


def test_identifiers_named_as_options() -> None:
    assert named_options("only if the QZ_ENABLE_ZFOLD compile-time option is used") == ["QZ_ENABLE_ZFOLD"]
    assert named_options("Set the `wrap` setting to false.") == ["`wrap`"]
    assert named_options("the option `retries` is read first") == ["`retries`"]
    assert named_options("Turn on the ServerKeepAlive option.") == ["ServerKeepAlive"]
    # a word, an acronym or an option written out (its own shape) is not named by this reading
    assert named_options("the default option is used") == []
    assert named_options("the HTTP option is used") == []
    assert named_options("the -z option") == []
    # the option the question writes itself, quoted back, is no answer to "which option …"
    assert not names_option("the `wrap` setting", {"wrap"})
    assert names_option("the `wrap` setting", {"line", "break"})


@needs_model
def test_an_option_named_by_its_kind_noun_answers() -> None:
    answer = _ask("Which compile-time option enables the zfold() function?")
    assert "QZ_ENABLE_ZFOLD" in answer


@needs_model
def test_a_function_without_an_option_stays_refused() -> None:
    assert _ask("Which compile-time option enables the zwrap() function?") == NO_CONTEXT_ANSWER
