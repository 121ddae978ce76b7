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

import msgspec
from mrpvm.plugins.sdk.embedding import dot, usable
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, stems, terms
from mrpvm.plugins.sdk.text import words as word_tokens

from .directives import tells_what_to_do
from .evidence import Sentence
from .focus import HOW_VERB, NEIGHBOUR
from .lexicon import ADVERBS, CONNECTIVES, DETERMINERS, LIGHT_VERBS, NEGATORS, PREPOSITIONS, PRONOUNS
from .meaning import read_ahead, vectors

OBJECT_WORDS = 4  # the longest object phrase read after a verb
REVERSATIVE = ("un", "dis", "de")  # English prefixes that reverse a verb's action (install / uninstall)
REVERSIBLE = 5  # the shortest base a prefix is read off ("design" is not the reverse of "sign")
NEGATION_REACH = 3  # the words a negator may stand before the verb it negates ("not be easily changed")
_NEGATING = NEGATORS | {"without"}
# "a different timeout", "the other branch": an adjective of identity (as "same" is) says which one, not what
_QUANTIFIERS = frozenset(
    {"one", "or", "more", "several", "many", "multiple", "new", "existing", "same", "different", "other"}
)
# an adverb between a verb and its object ("print only the name") is no part of the object
_SKIPPED = DETERMINERS | _QUANTIFIERS | ADVERBS
_ENDS = PREPOSITIONS | CONNECTIVES | STOPWORDS
_CODE = lazy_pattern(r"``[^`]*``|`[^`]*`")
# an option's name ("--amend", "-n") is one token that is no word: it names the option, it is no verb; a
# name with digits ("IPv6", "utf8") is one word
_TOKEN = lazy_pattern(r"(?<![\w-])--?[A-Za-z][\w-]*|[A-Za-z][A-Za-z0-9'-]*|[^\sA-Za-z]")
# verbs that ask for an action not to happen ("how do I stop X from using Y")
PREVENTING = frozenset({"stop", "prevent", "keep", "block"})
_FROM_DOING = lazy_pattern(r"\s*(.{1,60}?)\s+from\s+([a-z]{2,}ing)\b(.*)", re.I | re.S)


class Action(msgspec.Struct, frozen=True):
    verb: str  # as written in the question ("delete")
    stem: str
    target: frozenset[str]  # the object's content stems ("virtual", "environ")
    head: str = ""  # the stem of the object's head noun, its last word ("environ")
    words: tuple[str, ...] = ()  # the object's content words as written ("virtual", "environment")
    # "how do I stop X from using Y": besides stopping X, that X *not* use Y (verb "using", object X and Y)
    prevented: Action | None = None


def asked_action(question: str, light: bool = False) -> Action | None:
    """The action and object of "how do I <verb> <object> …", or None when there is none to read; with
    `light`, only that of a light verb ("how do I make incremental backups": make / incremental backups)."""
    found = HOW_VERB.search(question)
    if found is None or (found.group(1).lower() in LIGHT_VERBS) != light:
        return None
    verb = found.group(1).lower()
    words = _object_words(_tokens(question[found.end() :]), 0)
    target = set(terms(" ".join(words)))
    if not target:
        return None
    head = next(iter(terms(words[-1])), "")
    written = tuple(w for w in words if terms(w))
    prevented = _kept_from(question[found.end() :]) if not light and verb in PREVENTING else None
    return Action(verb, next(iter(stems([verb])), verb), frozenset(target), head, written, prevented)


def _kept_from(rest: str) -> Action | None:
    """The action "stop|prevent|keep <agent> from <verb>ing <object>" asks not to happen (`rest` follows the
    preventing verb): a passage saying the agent does not do it ("X will not use Y") tells how, under the
    condition it states; None when `rest` is no such phrase."""
    found = _FROM_DOING.match(rest)
    if found is None:
        return None
    agent = _phrase_words(found.group(1))
    done = _phrase_words(found.group(3))
    words = [*agent, *done]
    target = set(terms(" ".join(words)))
    if not agent or not target:
        return None
    verb = found.group(2).lower()
    head = next(iter(terms(words[-1])), "")
    written = tuple(w for w in words if terms(w))
    return Action(verb, next(iter(stems([verb])), verb), frozenset(target), head, written)


def _phrase_words(text: str) -> list[str]:
    """The content words of the noun phrase opening `text`, names with digits kept whole ("IPv6")."""
    out: list[str] = []
    for token in word_tokens(text.split("?")[0]):
        if token in _SKIPPED:
            continue
        if token in _ENDS or len(out) == OBJECT_WORDS:
            break
        out.append(token)
    return out


def _tokens(text: str) -> list[str]:
    """Words and punctuation, a code span or an option's name read as one punctuation mark (it ends a
    phrase)."""
    return _TOKEN.findall(_CODE.sub(" ; ", text))


def _object_after(tokens: list[str], start: int) -> set[str]:
    """The content stems of the noun phrase starting at tokens[start] (determiners skipped)."""
    return set(terms(" ".join(_object_words(tokens, start))))


def _object_words(tokens: list[str], start: int) -> list[str]:
    """The words of the noun phrase starting at tokens[start], determiners, quantifiers and adverbs skipped
    ("print only the name of …": name), none after a pronoun."""
    i = start
    while i < len(tokens) and tokens[i].lower() in _SKIPPED:
        i += 1
    if i < len(tokens) and tokens[i].lower() in PRONOUNS:
        return []  # "remove it": an object the phrase does not name
    words: list[str] = []
    for token in tokens[i : i + OBJECT_WORDS]:
        low = token.lower()
        if not token[0].isalpha() or low in _ENDS:
            break
        words.append(low)
    return words


def misapplied(action: Action, sentences: Sequence[Sentence]) -> bool:
    """The passage performs the action (or a synonym) only on objects other than the asked one, while it
    names the asked object in another role: it tells how to do something else."""
    _read_ahead(action, [s for s in sentences if not s.code])
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


def acts(action: Action, sentences: Sequence[Sentence], said: set[str]) -> bool:
    """Whether a passage can answer "how do I <verb> <object>": it (with its headings: `said`) names every
    word of the object (or a synonym of it), and it names the action (or a synonym) or tells something to
    do, not the reverse of the action ("install" for "uninstall"; "X can then use Y" tells nothing to do)."""
    if not names_object(action, sentences, said):
        return False
    _read_ahead(action, sentences)
    kept = action.prevented  # "stop X from using Y": a passage saying X does not use Y, under its condition
    if kept is not None and names_object(kept, sentences, said) and _says_not(kept, sentences):
        return True
    if performs(action, sentences):
        return not negates(action, sentences)
    return not reverses(action, sentences) and tells_what_to_do(list(sentences))


def done_elsewhere(action: Action, pool: Sequence[Sentence]) -> bool:
    """The evidence names the action (or a synonym) only where it acts on another object while naming the
    asked one ("`pip uninstall` … will remove the packages from the virtual environment" and nothing else
    for "How do I delete a virtual environment?"): the documents tell how to do something else."""
    _read_ahead(action, [s for s in pool if not s.code])
    doing = [s for s in pool if not s.code and performs(action, [s])]
    return bool(doing) and all(misapplied(action, [s]) for s in doing)


def performs(action: Action, sentences: Sequence[Sentence]) -> bool:
    """The passage names the asked action: the verb (any inflection) or a synonym in a sentence, or the verb
    in the heading it stands under."""
    for s in sentences:
        if action.stem in s.under or any(
            t[0].isalpha() and _is_action(action, t.lower()) for t in _tokens(s.text)
        ):
            return True
    return False


def negates(action: Action, sentences: Sequence[Sentence]) -> bool:
    """The passage names the asked action on the asked object only where a negation governs it ("… amends a
    note without changing its title" for "how do I change the title?"; "amends" acts on another object):
    it tells how to do something else, not the asked thing."""
    negated = False
    for s in sentences:
        if action.stem in s.under:
            return False
        tokens = _tokens(s.text)
        for i, token in enumerate(tokens):
            if not (token[0].isalpha() and _is_action(action, token.lower())):
                continue
            if _negated(tokens, i):
                negated = True
            elif not (done_to := _object_after(tokens, i + 1)) or done_to & action.target:
                return False  # done to the asked object, or to one not read: it performs the action
    return negated


def _says_not(action: Action, sentences: Sequence[Sentence]) -> bool:
    """A sentence names the asked action (or a synonym) under a negation ("… will not use IPv6 sockets")."""
    for s in sentences:
        tokens = _tokens(s.text)
        if any(
            t[0].isalpha() and _is_action(action, t.lower()) and _negated(tokens, i)
            for i, t in enumerate(tokens)
        ):
            return True
    return False


def _negated(tokens: list[str], at: int) -> bool:
    """A negator ("not", "never", "without", "doesn't") stands within NEGATION_REACH words before tokens[at],
    inside its clause (punctuation ends the reach)."""
    for token in reversed(tokens[max(0, at - NEGATION_REACH) : at]):
        if not token[0].isalpha():
            return False
        word = token.lower()
        if word in _NEGATING or word.endswith("n't"):
            return True
    return False


def names_object(action: Action, sentences: Sequence[Sentence], said: set[str]) -> bool:
    """Every word of the asked object is `said` (by the passage with its headings) or has a synonym among
    the passage's words (MiniLM's cosine >= NEIGHBOUR)."""
    words = [w for w in action.words if not set(terms(w)) <= said]
    if not words:
        return True
    if not usable():
        return False
    vocabulary = list(
        dict.fromkeys(
            t.lower()
            for s in sentences
            for t in _tokens(s.text)
            if t[0].isalpha() and t.lower() not in STOPWORDS
        )
    )
    if not vocabulary:
        return False
    found = vectors([*words, *vocabulary])
    asked, said = found[: len(words)], found[len(words) :]
    return all(max(dot(w, v) for v in said) >= NEIGHBOUR for w in asked)


def reverses(action: Action, sentences: Sequence[Sentence]) -> bool:
    """The passage names the reverse of the asked action (a reversative prefix, un-/dis-/de-, added to the
    verb or taken from it: "install" for "uninstall", "activate" for "deactivate") and not the action
    itself: it tells how to do the opposite."""
    said = {t for s in sentences for t in s.terms}
    if action.stem in said:
        return False
    return bool(said & _reversals(action.stem))


def _reversals(stem: str) -> set[str]:
    """The stems a reversative prefix makes of `stem` or takes from it (bases of REVERSIBLE letters or more)."""
    bare = stem.replace("-", "")
    out = {p + bare for p in REVERSATIVE if len(bare) >= REVERSIBLE}
    out |= {bare[len(p) :] for p in REVERSATIVE if bare.startswith(p) and len(bare) - len(p) >= REVERSIBLE}
    return out


def _read_ahead(action: Action, sentences: Sequence[Sentence]) -> None:
    """Read (or encode) in one batch the vectors `_is_action` will compare the verb with over `sentences`:
    the judges ask word by word and stop at the first match, and a one-text encode costs ~4 ms of fixed
    overhead where a batch of words costs about one (meaning.read_ahead: the judges' word-by-word reads
    then find them)."""
    if not usable():
        return
    words = dict.fromkeys(
        low
        for s in sentences
        for t in _tokens(s.text)
        if t[0].isalpha() and _by_meaning(action, low := t.lower())
    )
    if words:
        read_ahead([action.verb, *words])


def _by_meaning(action: Action, word: str) -> bool:
    """`word` may name the action only by meaning: a word, not the verb's own stem."""
    return word not in STOPWORDS and len(word) >= 3 and next(iter(stems([word])), "") != action.stem


def _is_action(action: Action, word: str) -> bool:
    if word in STOPWORDS or len(word) < 3:
        return False
    if not _by_meaning(action, word):
        return True
    if not usable():  # the model is loaded only when a word's vector is not kept (meaning.vectors)
        return False
    verb, other = vectors([action.verb, word])
    return dot(verb, other) >= NEIGHBOUR
