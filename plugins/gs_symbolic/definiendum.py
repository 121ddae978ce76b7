"""What a "What is X?" question asks to define, and whether a passage is about X.

A definition answers "What is X?" with X as its subject: "X is a …", "X, a …" (an apposition), the entry
headed X, or a sentence opening with X. A sentence that names X inside a clause about something else ("The
module used to create and manage *virtual environments* is called venv.") says what that something else is:
it may be the best candidate, but it is not a definition of X, so it is no `success`.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import without_references
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .context_terms import entry_title, header_terms
from .evidence import Sentence
from .lexicon import PREPOSITIONS

MAX_DEFINIENDUM = 4  # words: a longer phrase is a description, not a term
OPENING_SLACK = 2  # terms before the definiendum in a sentence that opens with it ("The new X …")
# an indefinite or no article: "What is a virtual environment?" asks what the thing is; "What is *the* default
# placeholder string?" asks to identify one thing (a value), which no definition answers
_WHAT_IS = lazy_pattern(r"^\s*what\s+(?:is|are)\s+(?:(?:a|an)\s+)?(?!the\s)([^?]+?)\s*\??\s*$", re.I)


def asked_definiendum(question: str) -> frozenset[str]:
    """The terms of X in "What is (a) X?" when X is a short phrase naming a thing ("virtual environment");
    empty otherwise ("What is the default port of X?" asks for an attribute, "What is the default
    placeholder?" for a value)."""
    found = _WHAT_IS.match(question)
    if found is None:
        return frozenset()
    words = found.group(1).split()
    if len(words) > MAX_DEFINIENDUM or any(w.lower() in PREPOSITIONS for w in words):
        return frozenset()
    return frozenset(terms(found.group(1)))


# "What does X do?": X is what the answer says the function of
_WHAT_DOES = lazy_pattern(r"^\s*what\s+(?:does|do)\s+(.+?)\s+do\s*\??\s*$", re.I)


def asked_subject(question: str) -> frozenset[str]:
    """The terms of what "What is (a) X?" or "What does X do?" asks about; empty for other questions."""
    does = _WHAT_DOES.match(question)
    return frozenset(terms(does.group(1))) if does else asked_definiendum(question)


def unnamed(subject: frozenset[str], collection: dict[str, float]) -> str:
    """A term of the asked subject the documents never hold (the retriever's weight 0: no occurrence); "".
    Documents that never name X do not say what X is or does: an answer is their best candidate at most."""
    return next((t for t in sorted(subject) if collection.get(t) == 0), "")


def about(defined: frozenset[str], sentence: Sentence) -> bool:
    """The sentence says what `defined` is: its entry is headed by it alone, it opens with it, or it states it
    in an apposition ("… a virtual environment, a self-contained directory tree …")."""
    if not defined or defined == header_terms(entry_title(sentence.unit)):
        return True  # the entry headed X ("Virtual environments"), not a section about doing something to X
    opening = set(sentence.terms[: len(defined) + OPENING_SLACK])
    return defined <= opening or apposes(defined, sentence)


def relates(defined: frozenset[str], sentence: Sentence) -> bool:
    """The sentence says what `defined` does by a relative clause right after it: "… offers the `-J` option
    that saves a remote file …" (a restrictive "that"/"which" clause, the definiendum's last words before
    it, one classifier noun between allowed)."""
    if not defined:
        return False
    text = without_references(sentence.text)
    for rel in re.finditer(r"\s(?:that|which)\s+(?!(?:is|are|was|were)\b)", text):
        before = terms(text[: rel.start()])
        if defined <= set(before[-len(defined) - 1 :]):
            return True
    return False


def apposes(defined: frozenset[str], sentence: Sentence) -> bool:
    """The sentence defines `defined` by an apposition: "… a :term:`virtual environment`, a self-contained
    directory tree …" (the phrase right before ", a|an|the|one" is the definiendum)."""
    if not defined:
        return False
    text = without_references(sentence.text)  # ":term:`virtual environment`" reads as its text
    for comma in re.finditer(r",\s+(?:an?|the|one)\s", text):
        before = terms(text[: comma.start()])
        if defined <= set(before[-len(defined) :]):
            return True
    return False
