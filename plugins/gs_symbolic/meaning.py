"""Meaning: how close a passage is to the question, by sentence embeddings (all-MiniLM-L6-v2).

The lexical judge (passages.py) counts the question's words; a paraphrase or a synonym defeats it, and a
passage that repeats the question's words without answering passes it. The cosine between the question and
a passage's sentences (each read with the heading it stands under, so an option's description carries the
option) is a second, independent signal: the judge adds it to a window's score and uses it to accept a
passage whose words differ from the question's and to refuse one whose words match but meaning does not.

Vectors are cached per text in the warm worker (the same evidence recurs across a session's turns), and kept
in the KB's artifacts folder for its sibling workers and successors (sdk embedding/kept.py). They are read
as plain tuples and compared in Python (sdk embedding/plain.py: exact to ~1e-15): numpy's import would be
most of a one-turn worker's CPU. Without the model installed, `for_question` returns None and the judge
is purely lexical.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from mrpvm.plugins.sdk.embedding import Vector, dot, kept_vectors, usable
from mrpvm.plugins.sdk.text import plain_text

from .evidence import Sentence

CACHE_SIZE = 50_000
MAX_SENTENCES = 24  # the sentences read per question: those sharing most of its words (bounds a turn's cost)
MAX_CONTEXT = 80  # characters of the heading a sentence is read with
_cache: OrderedDict[str, Vector] = OrderedDict()
# vectors read ahead in one batch (`read_ahead`) that no judge has asked for yet: kept apart from `_cache`,
# whose texts `for_question` reads free, so reading ahead never changes which sentences a judge reads
_ahead: dict[str, Vector] = {}


def sentence_text(s: Sentence) -> str:
    """What a sentence says in its place, as a reader reads it (a link as its text, no bare URL: an address
    is a run of word pieces that pulls the vector away from what the sentence says): prefixed by its unit's
    term or heading when it does not name it."""
    text = plain_text(s.text)
    label = plain_text(s.unit.title or s.unit.heading or "").strip()[:MAX_CONTEXT]
    if not label or label.lower() in text.lower():
        return text
    return f"{label}: {text}"


def vectors(texts: Sequence[str]) -> list[Vector]:
    """Vectors of texts (unit length), from the worker's cache, the kept vectors or encoded once."""
    missing = list(dict.fromkeys(t for t in texts if t not in _cache))
    if missing:
        read = _read([t for t in missing if t not in _ahead])
        for text in missing:
            _cache[text] = _ahead.pop(text) if text in _ahead else read[text]
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return [_cache[t] for t in texts]


def read_ahead(texts: Sequence[str]) -> None:
    """Read (or encode) in one batch the vectors of texts a judge may ask for one by one next (a one-text
    encode costs ~4 ms of fixed overhead, a batch of words about one): `vectors` then finds them."""
    if len(_ahead) > CACHE_SIZE:
        _ahead.clear()
    _ahead.update(_read([t for t in dict.fromkeys(texts) if t not in _cache and t not in _ahead]))


def _read(texts: list[str]) -> dict[str, Vector]:
    if not texts:
        return {}
    encoded = kept_vectors(texts)  # read from the KB folder's kept vectors where a sibling encoded them
    assert encoded is not None
    return dict(zip(texts, encoded, strict=True))


class Meaning:
    """Cosines of one question with the sentences of its evidence."""

    def __init__(self, question: str, pool: Sequence[Sentence]):
        texts = [sentence_text(s) for s in pool]
        asked, *found = vectors([question, *texts])
        self._by_sentence = {id(s): dot(asked, v) for s, v in zip(pool, found, strict=True)}
        self._read = list(pool)

    @property
    def read(self) -> list[Sentence]:
        """The sentences read (those `of` gives a cosine for)."""
        return self._read

    def of(self, sentence: Sentence) -> float | None:
        return self._by_sentence.get(id(sentence))

    def window(self, sentences: Sequence[Sentence]) -> float | None:
        """A window means what its closest sentence means (the others complete it); None when none of its
        sentences was read (the judge is then lexical for it)."""
        read = [c for c in (self.of(s) for s in sentences) if c is not None]
        return max(read) if read else None


def for_question(
    question: str, pool: Sequence[Sentence], overlap: Callable[[Sentence], float] | None = None
) -> Meaning | None:
    """The question's Meaning over the MAX_SENTENCES sentences of `pool` with the most `overlap` (the
    question's weighted words), or None without the model (lexical path only). Which sentences are read
    never depends on what a warm worker happens to have encoded before: the same question over the same
    evidence gets the same answer in a fresh process and in a daemon."""
    if not pool or not usable():
        return None
    if overlap is not None and len(pool) > MAX_SENTENCES:
        pool = sorted(pool, key=lambda s: -overlap(s))[:MAX_SENTENCES]
    return Meaning(question, pool)
