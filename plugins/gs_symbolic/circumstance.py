"""Whether a passage speaks to every part of the circumstance a behaviour question sets (issue 20: an honest
`success`).

"What happens to lines holding only tabs when the file is saved?", "What does the pump do when the tank
runs dry?", "How does the scheduler order jobs of equal priority?": a question about a behaviour names the
thing that behaves and the circumstance it behaves under, and each of its words narrows what is asked. A
passage that states the thing but not the circumstance ("Saving the file rewrites every line.", silent on
lines holding only tabs) describes the thing in general: it may be the best candidate, it does not say
what happens under the asked circumstance, so it is not `success`.

A word of the question counts as stated when the passage (with its headings) states its term, or, with the
sentence-embedding model, writes a word close to it in meaning (MiniLM cosine of the two words alone:
"ends" / "exit", "zero" / "0"): a paraphrase of the circumstance speaks to it. Without the model only the
words themselves count. Other question forms are left to the other tests: a "which <noun>" question's
words describe the slot its answer fills, and a passage may name the answer in other words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mrpvm.plugins.sdk.embedding import dot, usable
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from . import meaning

# the frame of a behaviour question: "what happens …", "what does X do …", "how does X <verb> …" (not "how
# do I …": a procedure, whose words name the goal, not a circumstance)
_BEHAVIOUR = lazy_pattern(
    r"^\s*(?:what\s+(?:happens|will\s+happen|would\s+happen|happened)\b"
    r"|what\s+(?:does|do|did|will|would)\s+.+?\s+do\b"
    r"|how\s+(?:does|do|did|will|would|can|could)\s+(?!(?:i|you|we|one|they)\b)\w)",
    re.I,
)
# the frame's own words: they ask, they name no part of the circumstance; and the negations ("if neither a
# theme nor a font is chosen" / "if you have not chosen a theme or a font"): a polarity, which the condition
# tests (support._condition_kept) read, not a word the passage must write
_FRAME = frozenset(terms("happen happens happened do does did not no nor neither never none without"))
# a word of the passage this close in meaning to a question word (the two read alone) states it in other
# words; calibrated on the development suites' answer-removed negatives (bench note in FAILURES.md, session
# 29): paraphrases there sit at 0.61 ("ends" / "exit") and 0.86 ("zero" / "0"), unrelated words at or below
# 0.41, and any threshold in 0.45-0.60 gives the same split
CLOSE_WORD = 0.5
_WORD = lazy_pattern(r"[A-Za-z0-9_]+")


def asks_behaviour(question: str) -> bool:
    """The question asks what happens, or what or how something does, under what it names."""
    return _BEHAVIOUR.match(question) is not None


def unspoken(question: str, said: set[str], text: str) -> list[str]:
    """The words of a behaviour question the passage does not speak to: neither its term among `said` (the
    passage's terms with its headings) nor a word of `text` (what is quoted) close in meaning. Empty for
    other questions, or when every word is spoken to."""
    if not asks_behaviour(question):
        return []
    missing = [w for w in _content_words(question) if not set(terms(w)) <= said | _FRAME]
    if not missing:
        return []
    words = list(dict.fromkeys(_WORD.findall(text)))
    if not usable() or not words:
        return missing
    vectors = meaning.vectors([*missing, *words])
    asked, found = vectors[: len(missing)], vectors[len(missing) :]
    return [w for w, v in zip(missing, asked, strict=True) if max(dot(v, f) for f in found) < CLOSE_WORD]


def _content_words(question: str) -> Iterable[str]:
    """The question's words that have a term (as written: the model reads words, not stems), each once."""
    seen: set[str] = set()
    for word in re.findall(r"[\w.+#$:-]+", question):
        word = word.strip(".:-")
        key = word.lower()
        if key and key not in seen and terms(word):
            seen.add(key)
            yield word
