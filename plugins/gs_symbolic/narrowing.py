"""Narrowing the relevant sentences to the ones that answer.

Lexical relevance keeps every sentence that shares enough weighted terms with the question. Three readings
sharpen it without any domain knowledge:

- negation: "Which plugin uses no LLM?" matches "no LLM cost" and a table cell "Uses LLM: No", never
  "Uses LLM: Yes" (negated words become terms of their own, `no-<stem>`);
- alternatives: the rows of one table and the items of one list are parallel alternatives; when some of
  them match the question better by themselves, the weaker ones are not the answer ("2 — invalid input",
  not every exit code, for "which exit code means invalid input");
- echoes: a sentence that says nothing but the question's own words ("`kb-thinkingdb`.", a heading
  "Wrapper Structure.") answers nothing;
- polarity: a sentence that negates a word the question asks about without negating it says the opposite
  ("Not affected versions: …" for "Which versions are affected?");
- literals: a token the question writes with symbols ("${VAR:?err}", "-J", "/etc/fstab") is matched as
  written, not only by its word stems (which "${VAR?err}" shares).
"""

from __future__ import annotations

import functools
import re

import msgspec.structs
from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, stems, terms, words

from .evidence import Sentence

NEGATED_PREFIX = "no-"
_NEGATOR = lazy_pattern(r"\b(?:no|not|non|never|without|lacks?|lacking)\b[\s-]+", re.I)
# words that may stand between a negator and what it negates ("does not use an LLM", "without any network")
_BRIDGE = word_set(
    """a an the any use uses using used need needs require requires required call calls have has make makes
    rely relies on be is are"""
)
# "Uses LLM: No" (a table cell read with its column name) or "Network — none"
_CELL_VALUE = r"(?::|—|–)\s*(?:no|none|false|never|n/?a)\s*(?=[;.,)]|$)"
_NEGATIVE_CELL = lazy_pattern(r"([^\W\d_][\w /+-]{0,40}?)\s*" + _CELL_VALUE, re.I)
# the negative value alone: the column name before it is a lazy run tried from every letter of the text (~90 %
# of _negations' time); a text without the value cannot hold a cell, and most texts have none
_NEGATIVE_VALUE = lazy_pattern(_CELL_VALUE, re.I)
_WORD = lazy_pattern(r"[^\W_][\w'-]*")


def negation_terms(text: str) -> list[str]:
    """`no-<stem>` for each word the text negates: the first content word after a negator (skipping
    articles and "use"/"need"-like verbs) and every content word of a column whose cell is "No"."""
    return list(_negations(text))


@functools.lru_cache(maxsize=8192)
def _negations(text: str) -> tuple[str, ...]:
    """negation_terms, remembered: a warm worker scores the same sentences in many windows and turns."""
    out: list[str] = []
    for m in _NEGATOR.finditer(text):
        for w in _WORD.findall(text[m.end() : m.end() + 60])[:4]:
            if w.lower() in _BRIDGE:
                continue
            out.extend(NEGATED_PREFIX + t for t in terms(w))
            break
    cells = _NEGATIVE_CELL.finditer(text) if _NEGATIVE_VALUE.search(text) else ()
    for m in cells:
        out.extend(NEGATED_PREFIX + t for t in terms(m.group(1)))
    return tuple(dict.fromkeys(out))


def with_negations(pool: list[Sentence], question_negations: list[str]) -> list[Sentence]:
    """The pool with each sentence's negated words added to its terms (only worth it when the question
    negates something: the new terms match nothing else)."""
    if not question_negations:
        return pool
    out = []
    for s in pool:
        extra = negation_terms(s.text)
        out.append(msgspec.structs.replace(s, terms=s.terms + extra) if extra else s)
    return out


def said(text: str) -> set[str]:
    """The stems of every non-stopword of a text, numbers and one-letter codes included ("5 — the file is
    missing" says "5", which the question never does)."""
    return set(stems([w for w in words(text) if w not in STOPWORDS]))


def echoes(sentence: Sentence, asked: set[str]) -> bool:
    """The sentence says nothing but the question's own words (`asked`, from `said`): "`kb-thinkingdb`.",
    "Wrapper Structure."."""
    return not sentence.code and said(sentence.text) <= asked


def drop_echoes(chosen: list[Sentence], question: str) -> list[Sentence]:
    """Without the sentences that say nothing but the question's own words, unless nothing else is left."""
    asked = said(question)
    kept = [s for s in chosen if not echoes(s, asked)]
    return kept or chosen


def code_under_named_heading(code: list[Sentence], question_terms: list[str]) -> list[Sentence]:
    """Code blocks whose heading the question names ("What is the wrapper structure?" over a section
    "Wrapper Structure" that holds only a tree diagram): the code is the answer although no command was
    asked for. They are read with the heading's terms, like list items under it."""
    asked = {t for t in question_terms if "-" not in t}
    out = []
    for s in code:
        heading = {t for t in terms(s.unit.heading) if "-" not in t}
        if heading and heading <= asked and len(asked - heading) <= 1:
            out.append(msgspec.structs.replace(s, under=frozenset(heading)))
    return out


def contradicts(text: str, asked: set[str]) -> bool:
    """The text negates a word of the question (`asked`: its terms, `no-<stem>` for those it negates itself)
    that the question does not negate: it states the opposite of what is asked."""
    return any(t[len(NEGATED_PREFIX) :] in asked and t not in asked for t in _negations(text))


# a token written with symbols: an option ("-J", "--max-time"), a path, a variable form ("${VAR:-x}")
_LITERAL = lazy_pattern(r"(?:^-{1,2}[^\W_]|[$/{}\[\]<>=:?@%|~^+*])")
_EDGE = "\"'`.,;!?()"


def literals(question: str) -> frozenset[str]:
    """The tokens a question writes with symbols, without the quotes and punctuation around them."""
    out = set()
    for raw in question.split():
        token = raw.strip(_EDGE)
        if len(token) > 1 and re.search(r"[^\W_]", token) and _LITERAL.search(token):
            out.add(token)
    return frozenset(out)


def quoted_share(text: str, written: frozenset[str]) -> float:
    """The share of the question's literals the text writes exactly as the question does."""
    return sum(w in text for w in written) / len(written) if written else 0.0
