"""A question's focus words and whether the documents know them (issue 20: an honest status).

The focus is what a question turns on: the kind of thing it asks for ("Under which *license* is X released?",
`answer_types.asked_noun`) and, for a how-to question, the action it asks how to do ("How do I *uninstall* a
distribution?") and the instrument it names for it ("How do I create an environment *with conda*?"). A focus word is **foreign** to the documents when the collection never holds its stem (the
retriever's term weight is 0: no occurrence, no inflection) and no word of the evidence is a close neighbour
of it by meaning (a synonym: "remove" for "uninstall"; MiniLM's cosine of the two words >= NEIGHBOUR).

A question with a foreign focus is most likely about something the documents do not cover; at best the
answer is an instance the documents name without naming its kind (a library's name for "which library").
So its answer is never `success` (weak at most), and it is answered at all only by a passage that means
the question (the judge's paraphrase threshold, passages.SEM_KEY: "distributed under the terms of …" may
say what "license" asks without a word near it) or that states the rest of the question when the documents
lack no other of its words (an instance named without its kind; passages.Judge.answers).

NEIGHBOUR was set on word pairs measured with the model, not on any suite: it keeps a synonym ("remove" /
"uninstall" 0.66, "computer" / "workstation" 0.68) and rejects a mere relative ("install" / "uninstall" 0.57,
"package" / "license" 0.37).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mrpvm.plugins.sdk.answer_shapes import options_named
from mrpvm.plugins.sdk.answer_types import asked_noun
from mrpvm.plugins.sdk.embedding import dot, usable
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, stems

from .evidence import Sentence
from .lexicon import ADVERBS, LIGHT_VERBS
from .meaning import vectors

NEIGHBOUR = 0.6
MAX_VOCABULARY = 4_000  # distinct evidence words compared with a foreign focus word (bounds a turn's cost)
# "how do I <verb> …", "how can we <verb> …", "how to <verb> …": the action asked about, read past the
# adverbs that may stand before a verb ("how can I *simply* delete …", "how do I *first* install …": an adverb
# modifies the action, it is not one)
HOW_VERB = lazy_pattern(
    r"\bhow\s+(?:(?:do|can|could|should|would|must|may|might)\s+(?:i|we|you|one|they|people)\s+|to\s+)"
    rf"(?:(?:{'|'.join(sorted(ADVERBS))})\s+)*"
    r"([a-z][a-z-]+)\b",
    re.I,
)
# "how do I create an environment *with conda*", "… using Docker": the instrument a how-to question names
_INSTRUMENT = lazy_pattern(r"\b(?:with|using|via)\s+(?:(?:the|a|an)\s+)?([A-Za-z][\w.+-]*)", re.I)
_WORD = lazy_pattern(r"[a-z][a-z-]{2,}")


def focus_words(question: str) -> list[str]:
    """The question's focus words as written: the kind asked for, the action of a how-to question."""
    out: list[str] = []
    noun = asked_noun(question)
    if noun:
        out.append(noun.lower())
    if verb := action_verb(question):
        out.append(verb)
    if HOW_VERB.search(question) and (tool := instrument(question)):
        out.append(tool)
    return [w for w in out if w not in STOPWORDS]


def action_verb(question: str) -> str:
    """The action a how-to question asks how to do ("How do I *uninstall* …"), lower-cased; "" for none or a
    light verb."""
    verb = HOW_VERB.search(question)
    word = verb.group(1).lower() if verb else ""
    return "" if word in LIGHT_VERBS else word


def instrument(question: str) -> str:
    """The tool a how-to question names for its action ("… with conda" → conda), lower-cased; ""."""
    verb = HOW_VERB.search(question)
    tool = _INSTRUMENT.search(question, verb.end()) if verb else None
    return tool.group(1).lower() if tool else ""


def foreign_focus(question: str, collection: dict[str, float], pool: Sequence[Sentence]) -> str:
    """The first focus word the documents never hold and the evidence has no close neighbour of; "" when
    every focus word is known (or the retriever gave no collection weights, or the model is absent)."""
    if not collection:
        return ""
    for word in focus_words(question):
        stem = next(iter(stems([word])), "")
        if not stem or collection.get(stem) != 0:
            continue  # held by the collection, or not a term the retriever weighed
        if not usable() or not has_neighbour(word, [s.text for s in pool]):
            return word
    return ""


def has_neighbour(word: str, texts: Sequence[str], closeness: float = NEIGHBOUR) -> bool:
    """Some word of `texts` is at least `closeness` alike `word` by meaning (MiniLM's cosine of the two)."""
    vocabulary: dict[str, None] = {}
    for text in texts:
        for w in _WORD.findall(text.lower()):
            if w not in STOPWORDS and w != word:
                vocabulary[w] = None
        if len(vocabulary) >= MAX_VOCABULARY:
            break
    if not vocabulary:
        return False
    asked, *found = vectors([word, *vocabulary])
    return max(dot(asked, v) for v in found) >= closeness


def unheld_option(question: str, pool: Sequence[Sentence]) -> str:
    """The first option the question writes out ("which release added --sort") that no evidence sentence,
    unit title or heading holds; "". An option is an identifier: no other word stands in for it, and the
    retrievers match it by its own token, so evidence without it is about something else."""
    for option in options_named(question):
        held = re.compile(rf"(?<![\w-]){re.escape(option)}(?![\w-])")
        if not any(held.search(t) for s in pool for t in (s.text, s.unit.title or "", s.unit.heading or "")):
            return option
    return ""
