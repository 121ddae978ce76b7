"""Follow-up questions in a chat: a pronoun that points back ("What is its default?", "Is it applied on
extraction?") is replaced by what the conversation was about, so retrieval and solving read a whole
question ("What is the default of ServerAliveInterval?") and the trace shows the rewritten intent.

The antecedent is the most recent named thing of the earlier questions (this turn's first, then the
session's history, newest first): a technical identifier (an option `--keep`, a `code` term, a CamelCase
keyword such as ServerAliveInterval) before a capitalised name. A question that names such a thing itself,
or whose previous question names none, is left as it is (the seed's Context line still carries the earlier
entities). So is a pronoun bound inside its own question or an expletive "it" (pronoun_binding.py): "Must
contributors use their legal names?", "… a record for the nobody user if /etc/passwd does not list it?",
"How long does it take for …".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mrpvm.plugins.sdk.patterns import lazy_pattern

from ..shared.topics import entities
from .pronoun_binding import bound_inside, expletive

_IDENTIFIER = lazy_pattern(
    r"`([^`\n]{1,60})`"  # a code term
    r"|(?<![\w-])(--?[A-Za-z][\w-]*(?:=\S+)?)"  # an option: -x, --max-time
    r"|\b([a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)\b"  # camelCase / CamelCase keywords
)
_POSSESSIVE = lazy_pattern(r"\b(its|their)\s+([A-Za-z][\w-]*)", re.I)
_PLAIN = lazy_pattern(r"\b(it|they|them)\b", re.I)


def named_things(text: str, openers: bool = True) -> list[str]:
    """Identifiers first, then capitalised names, in order of appearance; `openers=False` leaves out a single
    capitalised word whose only sign of a name is opening a sentence ("Several processes …")."""
    found = [next(g for g in m.groups() if g) for m in _IDENTIFIER.finditer(text)]
    found += [phrase for phrase, initial in entities(text) if openers or not initial or " " in phrase]
    return list(dict.fromkeys(found))


def antecedent(earlier: Iterable[str]) -> str | None:
    """The thing the conversation is about: what the newest earlier question names (newest first); one that
    itself points back passes the question on to the one before it; one about something unnamed ("How long
    are snapshots kept?") ends the search: no antecedent."""
    for text in earlier:
        things = named_things(text, openers=False)
        if things:
            return things[0]
        if not (_POSSESSIVE.search(text) or _PLAIN.search(text)):
            return None
    return None


def resolve(question: str, earlier: Iterable[str]) -> str:
    """The question with its first pointing-back pronoun replaced by the antecedent, or unchanged."""
    if named_things(question):
        return question
    thing = antecedent(earlier)
    if thing is None:
        return question
    possessive = _POSSESSIVE.search(question)
    plain = _PLAIN.search(question)
    if possessive and (plain is None or possessive.start() < plain.start()):
        if bound_inside(question, possessive.start(), possessive.group(1)):
            return question
        noun = possessive.group(2)
        return f"{question[: possessive.start()]}the {noun} of {thing}{question[possessive.end() :]}"
    if plain and not (
        bound_inside(question, plain.start(), plain.group(1)) or expletive(question, plain.start())
    ):
        return f"{question[: plain.start()]}{thing}{question[plain.end() :]}"
    return question
