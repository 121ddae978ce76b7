"""A yes/no question made hypothetical by its opening modal only (issue 20: false refusals).

"Would the old index be kept after the upgrade?", "Could a guest edit the board?": question.py marks every
question that writes *would*, *could* or *might* hypothetical, and a hypothetical yes/no question was left
to explicit statements and stated necessities alone (constrained.yes_no) — no polarity reader read it. A
question whose only hypothetical word is the modal that opens it is no counterfactual, though: it asks
the proposition with that modal, and a sentence that states the proposition with the same modal (or its
plain form: *will* for *would*, *can* for *could*, *may* for *might*: lexicon.HYPOTHETICAL_MODALS), negated
or not, answers it ("The old index would not be kept" → No). Such a question is read by the ordinary
polarity readers; the answer is `success` only when the stating sentence writes that modal, so "Would the
file be deleted?" over "The file is deleted." is answered, weak (the sentence says what happens, not what
would under the question's supposition). Only a sentence the polarity readers find stating the proposition
answers: the readings by meaning (polar_meaning, polar_reader, polar_default) are not tried, as they may
read past a condition ("The proxy would drop requests if the pool were empty" does not answer "Would the
proxy drop requests?").

A condition, a supposition or a counterfactual ("if", "suppose", "instead", "had … been") keeps the
question hypothetical: `modal_asked` is "" for it and it is answered as before.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .lexicon import HYPOTHETICAL_MODALS

# the hypothetical frames question.py reads besides the three modals
_OTHER_FRAMES = lazy_pattern(
    r"\b(?:if|suppose|supposing|imagine|hypothetical(?:ly)?|counterfactual|instead|otherwise|"
    r"whether\s+or\s+not)\b|\bhad\s+\w+(?:ed|en)\b",
    re.I,
)
_OPENING = lazy_pattern(r"^\W*(would|could|might)(?:n[’']t)?\s+\S", re.I)
_WORD = lazy_pattern(r"[A-Za-z]+(?:[’'][a-z]+)?")
# each modal's negative forms ("can't", "cannot", "won't")
_NEGATIVE = {
    "would": ("wouldn't", "won't", "wouldn’t", "won’t"),
    "could": ("couldn't", "can't", "cannot", "couldn’t", "can’t"),
    "might": ("mightn't", "mightn’t"),
}


def modal_asked(question: str) -> str:
    """The modal ("would", "could", "might") that opens a yes/no question when it is the question's only
    hypothetical word; "" otherwise."""
    opening = _OPENING.match(question)
    if opening is None or _OTHER_FRAMES.search(question):
        return ""
    modal = opening.group(1).lower()
    later = [w.lower() for w in _WORD.findall(question[opening.end(1) :])]
    if any(w in HYPOTHETICAL_MODALS for w in later):
        return ""  # "Could it be that X would …": a second modal frames another supposition
    return modal


def states_modal(modal: str, sentence: str) -> bool:
    """The sentence writes the question's modal or its plain form, negated or not."""
    forms = HYPOTHETICAL_MODALS.get(modal, set()) | set(_NEGATIVE.get(modal, ()))
    return any(w.lower() in forms for w in _WORD.findall(sentence))
