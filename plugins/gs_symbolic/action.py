"""The action a how-to question asks for, and whether a passage performs it on the asked object.

"How do I delete a virtual environment?" asks for an action (delete) on an object (a virtual environment).
A sentence that performs the action, or a synonym of it, on *another* object while naming the asked one in
another role ("`pip uninstall` … will remove the packages *from* the virtual environment") tells how to do
something else: shallow predicate-argument matching, the check a reader makes before trusting an answer.

The object is read shallowly, without a parser: the words right after the verb, past determiners and
quantifiers, up to a preposition, a connective, punctuation or OBJECT_WORDS words. Code spans are names,
not verbs, and end a phrase. An occurrence of the verb with no object read (a passive "can be deleted by …",
an object pronoun "remove it") tells nothing, so a passage is judged to act on another object only when
every occurrence of the action acts on an object read and none of them on the asked one.

Synonyms are neighbours by MiniLM (focus.NEIGHBOUR, set on word pairs, not on suites): "remove" for
"delete". Without the model only the verb's own stem counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from mrpvm.plugins.sdk.embedding import usable
from mrpvm.plugins.sdk.text import STOPWORDS, stems, terms

from .evidence import Sentence
from .focus import HOW_VERB, LIGHT_VERBS, NEIGHBOUR
from .lexicon import CONNECTIVES, DETERMINERS, PREPOSITIONS, PRONOUNS
from .meaning import vectors

OBJECT_WORDS = 4  # the longest object phrase read after a verb
_QUANTIFIERS = frozenset({"one", "or", "more", "several", "many", "multiple", "new", "existing", "same"})
_SKIPPED = DETERMINERS | _QUANTIFIERS
_ENDS = PREPOSITIONS | CONNECTIVES | STOPWORDS
_CODE = re.compile(r"``[^`]*``|`[^`]*`")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]")


@dataclass(frozen=True, slots=True)
class Action:
    verb: str  # as written in the question ("delete")
    stem: str
    target: frozenset[str]  # the object's content stems ("virtual", "environ")


def asked_action(question: str) -> Action | None:
    """The action and object of "how do I <verb> <object> …", or None when there is none to read."""
    found = HOW_VERB.search(question)
    if found is None or found.group(1).lower() in LIGHT_VERBS:
        return None
    verb = found.group(1).lower()
    target = _object_after(_tokens(question[found.end() :]), 0)
    if not target:
        return None
    return Action(verb, next(iter(stems([verb])), verb), frozenset(target))


def _tokens(text: str) -> list[str]:
    """Words and punctuation, a code span read as one punctuation mark (it ends a phrase)."""
    return _TOKEN.findall(_CODE.sub(" ; ", text))


def _object_after(tokens: list[str], start: int) -> set[str]:
    """The content stems of the noun phrase starting at tokens[start] (determiners skipped)."""
    i = start
    while i < len(tokens) and tokens[i].lower() in _SKIPPED:
        i += 1
    if i < len(tokens) and tokens[i].lower() in PRONOUNS:
        return set()  # "remove it": an object the phrase does not name
    words: list[str] = []
    for token in tokens[i : i + OBJECT_WORDS]:
        low = token.lower()
        if not token[0].isalpha() or low in _ENDS:
            break
        words.append(low)
    return set(terms(" ".join(words)))


def misapplied(action: Action, sentences: Sequence[Sentence]) -> bool:
    """The passage performs the action (or a synonym) only on objects other than the asked one, while it
    names the asked object in another role: it tells how to do something else."""
    for s in sentences:
        if s.code or not action.target <= set(s.terms):
            continue
        tokens = _tokens(s.text)
        spots = [i for i, t in enumerate(tokens) if t[0].isalpha() and _is_action(action, t.lower())]
        objects = [_object_after(tokens, i + 1) for i in spots]
        read = [o for o in objects if o]
        if read and len(read) == len(objects) and not any(o & action.target for o in read):
            return True
    return False


def _is_action(action: Action, word: str) -> bool:
    if word in STOPWORDS or len(word) < 3:
        return False
    if next(iter(stems([word])), "") == action.stem:
        return True
    if not usable():  # the model is loaded only when a word's vector is not kept (meaning.vectors)
        return False
    found = vectors([action.verb, word])
    return bool(np.dot(found[0], found[1]) >= NEIGHBOUR)
