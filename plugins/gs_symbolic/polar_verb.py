"""The verb a yes/no question turns on ("Can Valgrind *keep* the debug information …?").

A sentence can carry nearly all of a question's terms and still say something else of them: "Valgrind will
discard the debug information of unloaded shared objects" shares every word of the question but its verb.
polarity.verdict still reads such a sentence (a paraphrase of the verb is common), but an answer whose
sentence does not carry the asked verb is not `success`: the proposition's words are there, its predicate
is not shown to be. Such a sentence yields to one that carries the verb (polarity.verdict), which may take
the proposition's other words from the statement right before it in its unit (`prior_terms`: a proposition
told over two sentences; a one-word sentence between, "Beware!", is passed over); a verdict's sentence that
opens with a pro-verb ("Doing so will …") is quoted after that statement (`referred`).
"""

from __future__ import annotations

from mrpvm.plugins.sdk.patterns import PRO_VERB

from .clauses import tokenize
from .evidence import Sentence, one_word
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


QUOTE_BUDGET = 300  # characters: the most a verdict's sentence and the statement it refers to may quote


def _prior(sentence: Sentence, pool: list[Sentence]) -> list[Sentence]:
    """The sentences of `pool` from the statement right before `sentence` in its unit up to it (a one-word
    sentence between, "Beware!", is passed over); [] when there is none."""
    unit = {
        s.order[2]: s for s in pool if s.unit.id == sentence.unit.id and s.order[:2] == sentence.order[:2]
    }
    at = sentence.order[2] - 1
    while at in unit and one_word(unit[at].text):
        at -= 1
    return [unit[n] for n in range(at, sentence.order[2])] if at in unit else []


def prior_terms(sentence: Sentence, pool: list[Sentence]) -> frozenset[str]:
    """The terms of the statement right before `sentence` in its unit (`_prior`)."""
    before = _prior(sentence, pool)
    return frozenset(before[0].terms) | before[0].carried if before else frozenset()


def referred(sentence: Sentence, pool: list[Sentence]) -> list[Sentence]:
    """The quote of a verdict's sentence: one that opens with a pro-verb ("Doing so will slow down your
    program.") after the statement whose action it refers to, when the two stay short (a pronoun's referent
    may be the unit's subject rather than the sentence before: "It" is left as it stands)."""
    before = _prior(sentence, pool) if PRO_VERB.match(sentence.text.strip()) and not sentence.code else []
    quoted = [*before, sentence]
    return quoted if before and sum(len(s.text) + 1 for s in quoted) <= QUOTE_BUDGET else [sentence]
