"""Answer shapes: the shallow recognisers of what a sentence states — a figure, a version, a date, a span of
time, a path or a place, an option, a command, a person's name, a quoted literal.

Each answer type with a recognisable shape (SHAPED_TYPES) is told here by its surface form alone
(`mentions_type`); what a question asks for is told by answer_types.py, which reads these shapes and is
never read by them. Generic English and generic markup only: no domain vocabulary.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .patterns import lazy_pattern
from .text import without_list_numbers

_UNITS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
NUMBER_WORD = rf"(?:(?:{_TENS})(?:[- ](?:{_UNITS}))?|{_UNITS}|hundred|thousand|million|billion|dozen|a few|several|a couple of)"
# "one" and "once" are left out: "one of: gnu, posix, …" names no quantity; "zero" is one ("the level will be
# zero" states the level as "0" would); a digit of a dotted version is none ("2.4.1" counts nothing; "0.5" and
# "3.2" stay numbers)
NUMBER = lazy_pattern(
    rf"(?<!\w)(?<!\d\.)(?!\d+(?:\.\d+){{2,}})\d|\b(?!one\b)(?:{NUMBER_WORD}|zero|twice|double|triple|half)\b"
    r"|\bnumber of \w+",  # "Default: number of CPUs": a quantity named by what it counts
    re.I,
)
_TIME_UNIT = r"(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?)"
# a unit after a figure, glued or apart ("1.5 hours", "2.5GB", "1800 seconds", "2048 bytes"): the figure is a
# measure, no version and no year
_MEASURE = rf"[ \t]*-?[ \t]*(?:%|{_TIME_UNIT}\b|bytes?\b|(?-i:[KMGT]i?B)\b)"
# a dotted version, "v2", "version 3"; a release named by its number on either side of the noun ("edition
# 2021", "the 2015 edition", "revision 12"); or a dependency's version constraint: a comparison before a
# number ("ca-certificates (>= 20130119)", "requests>=2", "~> 1"), which states a version whatever its digits; a
# decimal before a unit is a measure ("1.5 hours")
_VERSION = lazy_pattern(
    rf"\b(?:\d+(?:\.\d+){{2,}}|(?>\d+\.\d+)(?!{_MEASURE}))[\w~+-]*|\bv\d+\b|\b(?:version|release|revision|edition)\s+\d"
    r"|\b\d+\s+(?:edition|release|revision)\b|(?:[<>=!~]=|>>|<<|~>)\s*v?\d",
    re.I,
)
# "May" capitalised only: the modal verb is no month ("step 2 may fail", "each may define …")
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May)|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
DATE = lazy_pattern(
    rf"\b(?:1[5-9]\d\d|20\d\d)\b(?!{_MEASURE})|\b(?:{_MONTHS})\b\.?\s+\d|\b\d{{1,2}}\s+(?:{_MONTHS})\b|\d{{4}}-\d\d-\d\d|"
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today|tomorrow)\b"
    # a month named whole after a preposition of time ("in March", "until early June"), no day given
    r"|\b(?:in|by|until|till|since|from|before|after|during|every|each)\s+(?:(?:early|late|mid)-?\s*)?"
    r"(?:january|february|march|april|(?-i:May)|june|july|august|september|october|november|december)\b",
    re.I,
)
# a unit an article counts is written out ("a day", "an hour"); "second" before a content word is the ordinal ("a
# second copy"), not the unit ("wait a second before …", "for a second.")
_ARTICLE_UNIT = (
    r"(?:milliseconds?|minutes?|hours?|days?|weeks?|months?|years?"
    r"|second(?!\s+(?!(?:of|or|and|to|in|on|at|for|per|after|before|later|ago|each|between|until|then)\b)[a-z]))"
)
# A span of time: a figure and a unit, glued ("30s", "2h", "500ms") or apart ("1.5 hours", "10-minute"); a number
# word and a unit as separate words ("ten minutes", "five-day"; not "tens", "ones", "eighth"); an article and a
# unit written out ("an hour"; not "as", "ah"). A figure is no part of a dotted version ("1.2.3 s") and no
# decade ("the 1990s").
DURATION = lazy_pattern(
    rf"(?<![\w.])(?!(?:1[5-9]|20)\d0s\b)\d+(?:\.\d+)?(?!\.\d)\s*-?\s*{_TIME_UNIT}\b"  # not "the 1990s"
    rf"|\b{NUMBER_WORD}(?:\s+|\s*-\s*){_TIME_UNIT}\b"
    rf"|\ban?\s+{_ARTICLE_UNIT}\b",
    re.I,
)
_PATH = lazy_pattern(r"(?:^|[\s(`'\"])(?:~|\.{1,2})?/[\w.@+-]+|\b[a-z][\w+.-]*://\S+|\b[A-Z]:\\", re.I)
# a place: a locative phrase ("in hollow logs", "at the harbour", "under /srv") or a word naming a place
_PLACE_WORDS = lazy_pattern(
    r"\b(?:in|at|on|near|inside|under|into|within|beside|behind|across|along|from|above|below)\s+"
    r"(?:the\s+|a\s+|an\s+)?[`'\"]?[\w/~.]"  # a name quoted as code: "in `.tessel/cache`"
    r"|\b(?:directory|folder|path|file|location)\b",
    re.I,
)
OPTION = lazy_pattern(r"(?<![\w-])--?[A-Za-z][\w-]*")

_COMMAND = lazy_pattern(r"`[^`]+`|^\s*\$ |(?<![\w-])--?[A-Za-z]|\b\w+\(\d\)")
# Sphinx cross-reference roles (":mod:`venv`", ":func:`dedent`", ":term:`…`"): a reference to a module, an API
# object, a glossary entry or a document, written in code font by the renderer but no command to run
# (":program:", ":command:", ":option:", ":samp:" and ":kbd:" stay literal text)
_REFERENCE_ROLE = lazy_pattern(
    r":(?:[a-z]+:)?(?:mod|func|class|meth|attr|data|exc|obj|const|type|term|ref|doc|pep|rfc|keyword):`[^`]*`"
)


def without_references(text: str) -> str:
    """The text with its cross-reference roles replaced by their target's plain name (":mod:`venv`" → "venv")."""
    return _REFERENCE_ROLE.sub(lambda m: m.group(0).split("`")[1].lstrip("~!"), text)


# Two or more capitalised words ("Priya Natarajan", "Dr. A. Vance") not opened by a function word ("The
# Aurora"), or a mail address.
_NAME = lazy_pattern(
    r"\b(?!(?:The|A|An|This|That|These|Those|In|On|At|For|If|When|It|Its|Our|Your|Their|Does|Do|Did|Is|Are"
    r"|Was|Were|Can|Could|Will|Would|Should|May|How|What|Why|Where|Which|Who)\b)"
    r"[A-Z][a-z]+(?:\s+(?:[A-Z]\.\s*)?[A-Z][a-z]+)+|<[^<>@\s]+@[^<>\s]+>"
)


def names_in(text: str) -> list[str]:
    """The capitalised multi-word names (and e-mail addresses) a text mentions, in order."""
    return [m.group() for m in _NAME.finditer(text)]


_FINDERS = {"version": _VERSION, "date": DATE}


def find_type(text: str, answer_type: str) -> str | None:
    """The first span of `text` of a version or date shape ("9.0" in "openssh (1:9.0p1-1)"), else None."""
    finder = _FINDERS.get(answer_type)
    if finder is None:
        return None
    if answer_type == "version":
        plain = re.search(r"\d+(?:\.\d+)+", text)
        if plain:
            return plain.group(0)
    m = finder.search(text)
    return m.group(0).strip() if m else None


@lru_cache(maxsize=8192)  # a sentence is tested once per window it is in
def mentions_type(text: str, answer_type: str) -> bool:
    """Whether `text` contains something of `answer_type` (always True for the types no shape tells:
    reason, procedure, comparison, definition, entity, yes-no, "")."""
    if answer_type == "number":
        return NUMBER.search(without_list_numbers(text)) is not None
    if answer_type == "version":
        return _VERSION.search(text) is not None
    if answer_type == "date":
        return DATE.search(text) is not None or _VERSION.search(text) is not None
    if answer_type == "duration":
        return DURATION.search(text) is not None
    if answer_type == "location":
        return _PATH.search(text) is not None or _PLACE_WORDS.search(text) is not None
    if answer_type == "option":
        return OPTION.search(text) is not None
    if answer_type == "command":
        return _COMMAND.search(without_references(text)) is not None
    if answer_type == "person":
        return _NAME.search(text) is not None
    return True


# The types whose answer has a recognisable shape: an answer without one does not answer.
SHAPED_TYPES = frozenset({"number", "version", "date", "duration", "location", "option", "person"})

# a literal quoted as itself (answer_types.asks_literal: a question that asks for the text verbatim)
_QUOTED = lazy_pattern(r"`[^`]+`|\"[^\"]{1,200}\"|(?<!\w)'[^']{1,200}'(?!\w)|(?<![\w/])#!\S+")


def quotes_literal(text: str) -> bool:
    """Whether `text` quotes a literal: a code span, a quoted string, a shebang, a path or an option."""
    return any(p.search(text) is not None for p in (_QUOTED, _PATH, OPTION))


def options_named(text: str) -> list[str]:
    """The command-line options a text writes out ("--sort", "-x"), in order, each once."""
    return list(dict.fromkeys(OPTION.findall(text)))
