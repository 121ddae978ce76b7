"""A word the question asks about that the documents never use (issue 20: an honest status).

A passage that states most of a question's words may still leave out the one it turns on: "When was Ledgerpad
first released?" shares "Ledgerpad" and "first" with "The first start after installing takes about a minute"
in a guide that never speaks of a release. The retriever weighs a word the collection never holds at 0 (no
occurrence, no inflection), so its absence lowers no passage's score; the judge still picks the best
candidate. When the question asks for a value of a shape (a time, a place, a figure, a version, a name: the
answer types that fill a slot of the asked event), that answer is not `success`: the documents never say
what the question asks, unless the answer words it otherwise (a synonym: MiniLM's cosine of the two words
>= SYNONYM). An open question ("Which values does X accept?") is answered by what it names, the verb aside.

The words read are the content words of the question's main clause (a leading condition, "If I don't pass
-f, …", is a premise, not what is asked), leaving out what frames the question rather than naming what it is
about: question and auxiliary words, "how long/many …", light verbs ("do", "make", "use", "happen", "mean"),
the noun naming the kind of answer ("which *command* …": the answer's shape stands for it), an example the
question gives and the source it cites.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import SHAPED_TYPES
from mrpvm.plugins.sdk.answer_types import asked_clause, asked_type_noun
from mrpvm.plugins.sdk.embedding import usable
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, terms

from .focus import has_neighbour
from .framing import FRAMING
from .history import asked_event
from .lexicon import LIGHT_STEMS
from .positional import positional_ordinals
from .question import Question, attributed_terms

# a word of the answer stands in for the asked one at this cosine: a synonym ("remove" / "uninstall" 0.66,
# "computer" / "workstation" 0.68), not a relative ("install" / "uninstall" 0.57, "download" / "released" 0.61)
SYNONYM = 0.65
# a word, not part of a name, a version or a path ("v10.0.0", "~/.config/fd")
_WORD = lazy_pattern(r"(?<![\w./~-])[A-Za-z][A-Za-z'-]*(?![\w./])")
# verbs that frame a question about an event or a meaning rather than name one ("What happens if …", "What
# does X mean?"), besides the light verbs of how-to questions
# ... and the words of a requirement ("Which version of X does Y need at least?", "… require?"): a dependency
# is written as a constraint ("depends on X (>= 2)", "using X (>= 2)", "Requires: X"), seldom with the verb;
# "at least" is a bound as "at most" is ("most" is a stop word)
_FRAME_STEMS = LIGHT_STEMS | frozenset(terms("happen mean need require least"))
_HOW = lazy_pattern(r"\bhow\s+[a-z]+", re.I)  # "how long", "how many": the kind of answer asked for
# "how many characters long", "how many metres deep": the dimension a measure is given in frames it too
_MEASURED = lazy_pattern(
    r"\bhow\s+(?:many|much)\s+[a-z]+\s+(long|wide|high|deep|tall|old|big|large|thick|heavy)\b", re.I
)


def unsaid_thing(q: Question, answer: str) -> str:
    """`unsaid_word` outside the event the question asks about: a word naming the thing whose value is asked
    ("Which release added *multithreaded* compression?"). Release notes word an addition many ways ("A new
    --hidden flag", "X now accepts …"), so an event verb they never use says less than a thing they never
    name."""
    return unsaid_word(q, answer, skip=asked_event(asked_clause(q.focus or q.text)))


def unsaid_word(q: Question, answer: str, skip: str = "") -> str:
    """For a question asking a value of a shape, the first content word of its main clause that the documents
    never hold (the retriever's weight 0) and the `answer` states no synonym of; "" when there is none, or
    when the retriever gave no collection weights. `skip`: a word not to count."""
    if not q.collection or q.answer_type not in SHAPED_TYPES:
        return ""
    asked = asked_clause(q.focus or q.text)
    typed = (asked_type_noun(asked)[1] or "").lower()
    framing = set(terms(" ".join(m.group(0) for m in _HOW.finditer(asked)))) | FRAMING
    framing |= set(terms(" ".join(m.group(1) for m in _MEASURED.finditer(asked))))
    framing |= q.examples | attributed_terms(q.text) | _FRAME_STEMS
    placed = positional_ordinals(asked)  # "the second argument": a position, no thing named
    for word in dict.fromkeys(w.lower() for w in _WORD.findall(_HOW.sub(" ", asked))):
        if word in STOPWORDS or word in (typed, skip) or word in placed:
            continue
        # a term the analysis kept (not "according to …"), outside what frames the question
        parts = [t for t in terms(word) if t in q.terms and t not in framing and "-" not in t]
        if not parts or all(q.collection.get(t) != 0 for t in parts):
            continue  # held by the collection, or not a term the retriever weighed
        if not usable() or not has_neighbour(word, [answer], SYNONYM):
            return word
    return ""
