"""A document's opening line states its own version and date, not a feature's (issue 20: unanswerable
questions answered).

A help file, a manual page or a specification opens with a line about the document itself: its name, the
program version it is written for, the date of its last change ("*tide.txt*  For Tide version 4.2.  Last
change: 2024 Mar 3"). "Which Tide version introduced the ripple mode?" shares the program's name and the
word "version" with that line, so it ranks first when no sentence says when the ripple mode came; but the
version it gives is the one the whole document describes. The opening line (the first unit of the source's
first chunk) answers a version or date question only about what it writes: when the question names a thing
(a content word of its asked clause, beyond the kind of value asked, the event, the name qualifying the kind
and words naming a document: "Which Tide version is this manual for?") that the documents hold elsewhere and
the line does not write, the value it states is not that thing's, and the documents do not state it.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import AUXILIARIES, asked_clause, asked_type_noun
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .framing import FRAMING
from .history import asked_event
from .lexicon import LIGHT_STEMS
from .passages import Passage
from .question import DOCUMENT_NOUNS, Question, attributed_terms

_DOCUMENT_STEMS = frozenset(terms(DOCUMENT_NOUNS.replace("|", " ")))
# the answer types a document's opening line states of the document itself
_SELF_TYPES = frozenset(["version", "date"])
# "this help file", "this page": a demonstrative refers to the document at hand, not to a thing it names
_DEICTIC = lazy_pattern(
    r"\b(?:this|these)\s+(\w+(?:\s+\w+)?)(?=\s*(?:for|about|describe|cover|[?,]|$))|\b(?:this|these)\s+(\w+)",
    re.I,
)
_WORD = lazy_pattern(r"[A-Za-z][\w'-]*")
# prepositions that ask for the bound of a time ("Since which version …?"), not what it is of
_BOUNDS = frozenset(terms("since until"))


def opening_only(passage: Passage) -> bool:
    """Every sentence of the passage comes from the document's opening line, a banner: the first unit of its
    source's first chunk, standing under no heading (an entry under a release's heading, "# 2.4.0", is
    content), that states no clause (no auxiliary or copula: "This package was debianized on …" is a
    statement about the package, "*tide.txt* For Tide version 4.2." names the document)."""
    return all(
        s.unit.chunkIndex == 0
        and s.unit.unitIndex == 0
        and not s.unit.sectionTitle
        and not AUXILIARIES & {w.lower() for w in _WORD.findall(s.unit.body)}
        for s in passage.sentences
    )


def thing_terms(q: Question) -> list[str]:
    """The terms naming what a version or date question asks about: its asked clause's content terms beyond
    the kind of value asked, the event, the name qualifying the kind, a document's own nouns and framing
    words."""
    asked = asked_clause(q.focus or q.text)
    drop = set(terms(asked_type_noun(asked)[1] or "")) | set(terms(asked_event(asked)))
    drop |= {t for m in _DEICTIC.finditer(asked) for t in terms(m.group(1) or m.group(2))}
    drop |= (
        FRAMING
        | LIGHT_STEMS
        | _BOUNDS
        | _DOCUMENT_STEMS
        | q.qualifiers
        | q.examples
        | attributed_terms(q.text)
    )
    return [t for t in dict.fromkeys(terms(asked)) if t in q.terms and t not in drop]


def about_other_thing(q: Question, passage: Passage) -> str:
    """A term of the asked thing that the documents hold but the passage, the document's opening line, does
    not write: the version or date the line states is the document's own, not the asked thing's; ""."""
    if q.answer_type not in _SELF_TYPES or not q.collection or not opening_only(passage):
        return ""
    written = {t for s in passage.sentences for t in (*s.terms, *s.under)}
    written |= {
        t for s in passage.sentences for t in terms(" ".join(filter(None, (s.unit.body, s.unit.title))))
    }
    return next((t for t in thing_terms(q) if t not in written and (q.collection.get(t) or 0) > 0), "")
