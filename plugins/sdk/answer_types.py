"""Expected answer types: what kind of thing a question asks for.

Classic question classification by the question word and the head noun it asks about ("who" → a
person, "how many" → a number, "which version" → a version, "what is the minimum size" → a number).
Whether a text states something of a type — the shallow recognisers of a digit, a dotted version, a path,
an option, a date, a capitalised name — is answer_shapes.py's, which this module reads (never the other
way). Generic English only: no domain vocabulary.
"""

from __future__ import annotations

import re

from .answer_shapes import OPTION

# re-exported for gs_symbolic/solver.py and passages.py, which other branches edit this session: they import
# these from answer_shapes (as every other caller does) once those branches are merged
from .answer_shapes import SHAPED_TYPES as SHAPED_TYPES
from .answer_shapes import find_type as find_type
from .answer_shapes import mentions_type as mentions_type
from .answer_shapes import quotes_literal as quotes_literal
from .lexicon import EXTREME_MODIFIERS, FUNCTION_NOUNS, TIME_UNITS, word_set
from .patterns import lazy_pattern
from .text import STOPWORDS
from .text import words as tokens

# Head nouns by the type of answer they ask for ("value" is not one: an option's value is a word, a string or a
# number, whatever the option takes) ("which <noun>", "what is the <noun> of ...").
_NOUN_TYPES: dict[str, frozenset[str]] = {
    "version": word_set("version versions release releases revision edition"),
    "number": word_set(
        """number numbers size sizes amount count total limit limits maximum minimum max min length
        width height depth weight speed rate ratio percentage percent price cost port level factor
        frequency capacity threshold temperature score memory ram space"""
    ),
    "date": word_set("date dates year years day days month months time deadline"),
    "duration": word_set("duration period"),
    "location": word_set("directory directories folder folders path paths location locations place url"),
    "option": word_set("option options flag flags switch switches argument arguments parameter parameters"),
    "command": word_set("command commands invocation"),
    "person": word_set(
        """person people author authors maintainer maintainers owner owners developer developers creator
        founder leader manager member members user who"""
    ),
}
_NOUN_TYPE = {noun: kind for kind, nouns in _NOUN_TYPES.items() for noun in nouns}
# Nouns that name nothing but the kind of answer ("the number of …", "the amount of …"): a text answers
# them with a figure, seldom with the noun itself, unlike attributes such as size or price.
TYPE_ONLY_NOUNS = word_set(
    "number numbers amount amounts count counts quantity quantities total value values"
)
_DETERMINERS = word_set("the a an this that these those its their his her my our your")
_MODIFIERS = word_set(
    """minimum maximum largest smallest biggest highest lowest default exact current latest oldest newest
    first last total supported required recommended same main new old other"""
)
_AUX = word_set(
    """is are was were am be been do does did can could will would should shall has have had may might must
    isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't hasn't
    haven't hadn't"""
)
AUXILIARIES = _AUX  # the auxiliaries and copulas: a line writing none states no clause
_WORD = lazy_pattern(r"[A-Za-z][\w'-]*")
_NP_END = word_set(
    "of for in on at to with by from about that which who whose where when than as can could will"
)
_STEPS = lazy_pattern(
    r"^(?:how (?:do|can|should|would|could) (?:i|we|you|one)\b|how to\b)|\bsteps?\b"
    r"|\bwhat (?:should|can|must|do) (?:i|we|you|one) (?:do|change|run)\b",  # "… What should I do?"
    re.I,
)
_COMPARE = lazy_pattern(
    r"\bdifferences? between\b|\bdiffers? from\b|\bcompare\b|\bcomparison (?:of|between)\b|\bversus\b|\bvs\.?\s",
    re.I,
)
_DO_SUPPORT = word_set("do does did don't doesn't didn't")
_DEFINE = lazy_pattern(
    r"^what (?:is|are) (?:an? )?[\w.+-]+\??$|^what (?:does|do) .+ (?:mean|do|stand for)\b|^define\b"
    r"|^what(?:'s| is| are) the (?:purpose|function|role|job|point|use)s? of\b",  # "what does X do?"
    re.I,
)
_WHO_IS_NAME = lazy_pattern(
    r"^(?i:who) (?i:is|was|are|were) (?:(?i:the|a|an) )?(?:[A-Z][\w.'-]*)(?: (?:of |de |van |von )?[A-Z][\w.'-]*){0,3}\??$"
)
_PREPOSITIONS = word_set("in on at under for from with by since of to into through during")
_SUBORDINATOR = word_set(
    "if when whenever after before once since because while although though unless given with according in"
    " on for per under from"
)
_WH = word_set("who whom whose what which when where why how")
_ALTERNATIVE = lazy_pattern(r"\bor\b(?!\s+(?:not|newer|later|higher|more|above|so)\b)", re.I)
_REASON = lazy_pattern(r"^(?:why\b|how come\b|what (?:causes|caused|is the reason|was the reason))", re.I)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _noun_type(words: list[str]) -> str | None:
    """The type named by a head noun of the noun phrase `words` opens ("the minimum GCC version" →
    version), up to the first preposition, relative word or verb: "the default order of members" asks
    for an order, not for members."""
    return _typed_noun(words)[0]


def _typed_noun(words: list[str]) -> tuple[str | None, str | None]:
    """(the type, the noun that names it) of `_noun_type`; (None, None) when no noun types the phrase."""
    modified = False  # a noun before the typed one: "credential manager", "package owner"
    extreme = False  # "the maximum time": an amount of time, not a point in it
    for n, w in enumerate(words[:6]):
        if w in _NP_END or w in _AUX:
            return None, None
        if w in _DETERMINERS or w in _MODIFIERS:
            extreme = extreme or w in EXTREME_MODIFIERS  # "the maximum time": an amount
            continue
        kind = _NOUN_TYPE.get(w) or _NOUN_TYPE.get(w.rstrip("s"))
        if kind == "person" and modified:
            return (
                None,
                None,
            )  # an agent noun compounded with a thing is often a program: no name shape required
        if kind == "date" and (extreme or _measured(words[n + 1 : n + 3])):
            return "number", w  # "the maximum time", "the time in seconds": a quantity of time
        if kind is not None:
            return kind, w
        modified = True
    return None, None


def _measured(after: list[str]) -> bool:
    """The noun is followed by the unit it is measured in ("time in seconds"): an amount is asked for."""
    return len(after) == 2 and after[0] == "in" and after[1] in TIME_UNITS


def asked_noun(question: str) -> str | None:
    """The head noun of what a "which/what <noun> …" question asks for ("Which storage engine does X use?"
    → engine); None for other questions and for "what is X" (which asks about X, not for a kind)."""
    words = _words(_main_clause(" ".join(question.strip().split())))
    if len(words) > 2 and words[0] in _PREPOSITIONS and words[1] in ("which", "what"):
        words = words[1:]  # "Under which license is X released?" asks for a license
    if len(words) < 2 or words[0] not in ("which", "what") or words[1] in _AUX:
        return None
    rest = words[1:5]
    # "which storage engine does …": the phrase before the auxiliary; without one ("which exit code
    # means …") the verb cannot be told from the nouns, so nothing is read
    aux = next((i for i, w in enumerate(rest) if w in _AUX), None)
    if not aux or any(w in _NP_END for w in rest[:aux]):
        return None
    nouns = [w for w in rest[:aux] if w not in _DETERMINERS and w not in _MODIFIERS]
    return nouns[-1] if nouns else None


def _main_clause(q: str) -> str:
    """The question without a leading subordinate or prepositional clause ("If I don't pass -f, where
    does …" → "where does …"; "With GCC 3.4 or newer, which variable …" → "which variable …")."""
    words = _words(q)
    if words and words[0] in _SUBORDINATOR and "," in q:
        lead, rest = (part.strip() for part in q.split(",", 1))
        # "According to the guide, where …", "In the manual, which …"; not "In which version …, and why?"
        if _words(rest) and not set(_words(lead)[1:]) & _WH:
            return rest
    return q


def is_choice(question: str) -> bool:
    """A question opened by an auxiliary that offers options ("Is it counted from 0 or from 1?"): answered
    by the option the evidence states, not by Yes/No."""
    words = _words(question)
    return bool(words) and words[0] in _AUX and _ALTERNATIVE.search(question) is not None


def alternatives(question: str) -> list[str]:
    """The two options of a choice question ("Is the offset counted from 0 or from 1?" → ["from 0",
    "from 1"]): a question opened by an auxiliary whose last "or" joins two options (not "or not", not "or
    later"); the left option is as many words before "or" as the right one has. [] for other questions."""
    q = _main_clause(" ".join(question.strip().split()))
    words = _words(q)
    if not words or words[0] not in _AUX:
        return []
    found = list(_ALTERNATIVE.finditer(q))
    if not found:
        return []
    cut = found[-1]
    right = tokens(q[cut.end() :])
    left = tokens(q[: cut.start()])
    if not right or len(right) >= len(left):
        return []
    return [" ".join(left[-len(right) :]), " ".join(right)]


def asked_clause(question: str) -> str:
    """The question's main clause, spaces collapsed, an option's kind noun left out ("the -z option")."""
    return _main_clause(" ".join(_without_option_kinds(question).strip().split()))


def asked_type_noun(question: str) -> tuple[str | None, str | None]:
    """(the type, the noun that names it) a "which/what <noun> …" question asks for; (None, None) without."""
    rest = _after_wh(_words(asked_clause(question)))
    return _typed_noun(rest) if rest is not None else (None, None)


def type_qualifiers(question: str) -> list[str]:
    """The words that qualify the noun naming the asked type ("In which Python version …" → ["python"]):
    they say which kind of version is asked for, which the answer ("Added in version 3.4") seldom repeats."""
    rest = _after_wh(_words(asked_clause(question)))
    kind, noun = _typed_noun(rest) if rest is not None else (None, None)
    if rest is None or kind is None or noun is None:
        return []
    return [w for w in rest[: rest.index(noun)] if w not in _DETERMINERS and w not in _MODIFIERS]


def _after_wh(words: list[str]) -> list[str] | None:
    """The words after "which"/"what" (and after the verb that follows it: "what is the minimum GCC
    version"), where the noun naming the asked type stands; None when the question opens no such phrase."""
    wh = next((i for i, w in enumerate(words[:4]) if w in ("which", "what")), None)
    if wh is None:
        return None
    rest = words[wh + 1 :]
    if rest and rest[0] in _DO_SUPPORT:
        # "what does the COMMENT option display?": "what" is the object, the noun phrase after "does" the
        # subject, whose head names what is asked about, not the answer's type ("what is the default port"
        # equates the two)
        return []
    return rest[1:] if rest and rest[0] in _AUX else rest


def expected_type(question: str) -> str:
    """The answer type of one question ("" when it cannot be told); see protocol.vocab.ANSWER_TYPES."""
    q = asked_clause(question)
    words = _words(q)
    if not words:
        return ""
    lead = words.index("how") if "how" in words[1:3] else 0
    if lead and all(w in _PREPOSITIONS or w == "up" for w in words[:lead]):
        words = words[lead:]  # "Up to how many …", "For how long …", "In how many …": asked as "how …" is
    first = words[0]
    if _REASON.match(q):
        return "reason"
    if _COMPARE.search(q):
        return "comparison"
    if first in ("who", "whom", "whose"):
        # "Who is Mara Holt?" asks what the named person is; "Who approved X?" asks for a person
        return "definition" if _WHO_IS_NAME.match(q) else "person"
    if first == "how" and len(words) > 1:
        second = words[1]
        if second in ("many", "much"):
            return "number"
        if second == "long":
            return "duration"
        if second in ("often", "big", "large", "small", "fast", "old", "far", "high", "tall"):
            return "number"
    if _STEPS.search(q):
        return "procedure"
    if first == "when":
        return "date"
    if first == "where":
        return "location"
    if first in _AUX:
        return "entity" if _ALTERNATIVE.search(q) else "yes-no"  # "counted from 0 or from 1?": a choice
    rest = _after_wh(words)
    if _DEFINE.match(q) and rest and len(rest) > 1 and rest[1] in FUNCTION_NOUNS:
        return "definition"  # "What is the purpose of X?"
    if rest is not None:
        kind = _noun_type(rest)
        if kind is not None:
            return kind
        if _DEFINE.match(q):
            return "definition"
        return "entity"
    if first in ("define", "explain", "describe"):
        return "definition" if first == "define" else ""
    return ""


# "the -z option", "a --dry-run flag", "the ALL option": the noun after an option written out, or after a
# function word written in capitals (which, unlike an acronym in "the HTTP server", cannot modify a noun:
# it names something), names its kind; the question asks about that option, not for one
_OPTION_KIND = lazy_pattern(rf"\b(?:the|a|an)\s+(?:{OPTION.pattern}|(?-i:([A-Z]+)))\s+([A-Za-z]+)\b", re.I)


def _kind_nouns(question: str) -> list[re.Match[str]]:
    return [
        m for m in _OPTION_KIND.finditer(question) if m.group(1) is None or m.group(1).lower() in STOPWORDS
    ]


def option_kinds(question: str) -> list[str]:
    """The nouns that say what kind of thing an option the question writes out is ("the -z option")."""
    return [m.group(2) for m in _kind_nouns(question)]


def _without_option_kinds(question: str) -> str:
    for m in reversed(_kind_nouns(question)):
        question = question[: m.start(2)].rstrip() + question[m.end(2) :]
    return question


# "the exact line", "the precise value", "verbatim": the question asks for the text itself, so an answer
# quotes it (code, a quoted string, a path, an option or a written command), not a description of it.
_LITERAL_ASKED = lazy_pattern(r"\b(?:exact|exactly|precise|verbatim|literal)\b", re.I)


def asks_literal(question: str) -> bool:
    """Whether the question asks for a text verbatim ("What exact line …", "the precise value …")."""
    return _LITERAL_ASKED.search(question) is not None
