"""The verb a yes/no question turns on ("Can Valgrind *keep* the debug information …?").

A sentence can carry nearly all of a question's terms and still say something else of them: "Valgrind will
discard the debug information of unloaded shared objects" shares every word of the question but its verb.
polarity.verdict still reads such a sentence (a paraphrase of the verb is common), but an answer whose
sentence does not carry the asked verb is not `success`: the proposition's words are there, its predicate
is not shown to be.
"""

from __future__ import annotations

from .clauses import tokenize
from .propositions import Claim

# auxiliaries that open a question about an action ("Does X keep …", "Can X keep …"); a copula or "have"
# opens one about a state, whose predicate word is often an adjective read through its opposites
_ACTION_AUX = frozenset(
    ["do", "does", "did", "can", "could", "will", "would", "may", "might", "must", "should", "shall"]
)


def main_verb(main: str, claim: Claim | None, prop: list[str]) -> str | None:
    """The stem of the verb right after the question's subject, when the question asks about an action and
    the verb is one of the proposition's weighted terms `prop`; else None."""
    toks = tokenize(main)
    if claim is None or claim.generic or not toks or toks[0].low not in _ACTION_AUX or not claim.subject:
        return None
    subject = [t.low for t in claim.subject]
    lows = [t.low for t in toks]
    for start in range(1, len(lows) - len(subject) + 1):
        if lows[start : start + len(subject)] == subject:
            after = start + len(subject)
            if after < len(toks):
                stems = [s for s in toks[after].stems if s in prop]
                return stems[0] if stems else None
            return None
    return None
