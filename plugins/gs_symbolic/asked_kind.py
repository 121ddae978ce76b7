"""A finer expected answer type for the questions the coarse one reads as `entity`, and whether a quoted
answer supplies one (issue 20: an honest `success`).

The coarse type (sdk/answer_types.expected_type) reads "which/what <noun> …" by a head noun of a closed list
and calls the rest `entity`, for which any sentence will do. A few question forms still say plainly what an
answer must hold (Li & Roth's fine classes, read from the question word, the head noun and the frame):
- "what is X (good|used) for?" (DESC: purpose): a statement of what X does or is for, not a sentence that
  only mentions X ("The tool now accepts the --fold option.");
- "what is the downside / advantage of X?" (DESC: evaluation): a contrast or a concession ("safer, but
  slower"), or the evaluation named;
- "what exit status / return code …" (NUM: code): a code, written as a numeral or a literal;
- "which <plural noun> …" (a list of instances): something named beyond the question's own words (a name,
  an identifier, code), not the class noun again ("Plugins or editors that support it …" for "which
  editors …");
- "what was X inspired by / based on / derived from?" (the other end of a stated relation): a sentence that
  states the relation; one that names X without it does not say what X came from.
A passage that lacks what its question's kind asks is the best candidate (weak), never `success`. The kinds
are read from the question alone; no word of any document is consulted.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import TYPE_ONLY_NOUNS, asked_noun, asked_type_noun
from mrpvm.plugins.sdk.lexicon import EVALUATION_NOUNS, looks_plural
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import stems, terms

PURPOSE = "purpose"
EVALUATION = "evaluation"
CODE = "code"
INSTANCES = "instances"
RELATION = "relation"
VALUE = "value"

# "What is --fold good for?", "What are stanzas used for?", "What is the cache for?"
_PURPOSE_ASKED = lazy_pattern(
    r"^\s*what(?:'s|\s+(?:is|are|was|were))\s+.+?\s+(?:(?:good|used|useful|meant|needed|there)\s+)?for\s*\??\s*$",
    re.I,
)
# a statement of use: a purpose clause, a verb of enabling, or the thing doing something ("… makes X …")
_PURPOSE_STATED = lazy_pattern(
    r"\b(?:to|for|so\s+that|in\s+order|allows?|lets?|makes?|enables?|helps?|useful|used|uses?|prevents?"
    r"|avoids?|ensures?|causes?|produces?|creates?|tells?|forces?|keeps?|when|if|instead)\b",
    re.I,
)
# a purpose said in so many words: the test a ranking can lean on (the one above only tells a sentence that
# states none: any "to", "for" or "when" passes it)
_PURPOSE_SAID = lazy_pattern(
    r"\b(?:purposes?|in\s+order\s+to|so\s+that|allows?|allowing|lets?|enables?|helps?"
    r"|(?:is|are)\s+(?:used|meant|intended|designed|provided|needed|useful|there)\s+(?:to|for)"
    r"|useful\s+(?:for|to|when))\b",
    re.I,
)
# "What is the downside of --sync?", "What are the advantages of X?": an evaluation (DESC), which a text states
# by contrast or concession ("safer, but slower"; "although it …, it …") more often than it names
_EVALUATION_WORDS = "|".join(sorted(EVALUATION_NOUNS))
_EVALUATION_ASKED = lazy_pattern(
    r"^\s*what(?:'s|\s+(?:is|are|was|were))\s+(?:the|an?|any)\s+(?:main\s+|biggest\s+|only\s+)?(?:"
    + _EVALUATION_WORDS
    + r")\s+(?:of|to|with|in)\b",
    re.I,
)
_EVALUATION_SAID = lazy_pattern(
    r"\b(?:although|though|but|however|whereas|yet|unfortunately|at\s+the\s+(?:cost|expense|price)\s+of"
    r"|the\s+(?:cost|price)\s+is|in\s+exchange|on\s+the\s+other\s+hand)\b|\b(?:" + _EVALUATION_WORDS + r")\b",
    re.I,
)
# "what exit status …", "which return code …", "what error codes …": a code is asked for
_CODE_ASKED = lazy_pattern(
    r"^\s*(?:what|which)\s+(?:(?!(?:is|are|was|were|do|does|did)\b)\w+\s+){0,2}?(?:(?:exit|return|error|status|result)\s+(?:status|code|value)"
    r"|(?:exit|error|status|return)\s+codes?)\b",
    re.I,
)
# a code: a numeral, a literal in code font, or a symbolic name in capitals ("EX_USAGE", "NOT_FOUND")
_CODE_STATED = lazy_pattern(r"(?<![\w.])\d+\b|`[^`]+`|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z]{3,}\b")
# "What were the rules inspired by?", "What is the format based on?", "What is X derived from?"
_RELATION_ASKED = lazy_pattern(
    r"^\s*what\s+(?:is|are|was|were)\s+.+?\s+([a-z]+ed)\s+(?:by|on|from|upon)\s*\??\s*$", re.I
)
# something named: code, an identifier (a hyphen, an underscore, a dot, a slash or a digit inside, or
# camelCase), a capitalised word inside a sentence, a quoted term
_NAMED = lazy_pattern(
    r"`[^`]+`|\"[^\"]{1,60}\"|\b[\w]+(?:[-_./][\w]+)+\b|\b\w*\d\w*\b|\b[a-z]+[A-Z]\w*\b"
    r"|(?<=[^\s.!?:*]\s)[A-Z][\w]*|\b[A-Z]{2,}\b"
)

# a non-specific quantifier before a plural noun ("some editors", "many other tools"): the sentence speaks
# of members of the class without saying which (non-specific indefinite reference)
_NONSPECIFIC = r"\b(?:some|many|several|certain|various|most|few|numerous|other)\s+(?:[\w-]+\s+){0,2}?"
# what names the members after all: an enumeration ("such as Vim", "including …", "e.g.", a colon)
_ENUMERATED = lazy_pattern(
    r"\b(?:such\s+as|like|including|includes?|namely|e\.g\.|for\s+example)\b|:\s*\S", re.I
)

# "what/which [modifier] noun": the wh-phrase up to its second word after the wh-word
_WH_PHRASE = lazy_pattern(r"^\s*(?:[a-z]+\s+)?(?:what|which)\s+((?:[\w-]+\s+)?[\w-]+)\b", re.I)
# a value that names itself: code, a quoted term, an identifier with a symbol inside (a path, `A::B`,
# `file.ext`, `a_b`), a figure (an acronym alone, "BSD", is a name of anything)
_VALUE = lazy_pattern(
    r"`[^`]+`|\"[^\"]{1,60}\"|“[^”]{1,60}”|\b[\w]+(?:(?:[-_./]|::)[\w]+)+\b|/[\w.-]+|\b\w*\d\w*\b"
)

# a numeral as a measure of something else: a compound modifier ("a 32-bit field", "3-way"), a power ("2**32")
_MEASURE = lazy_pattern(r"\b\d+-[a-z]+\b|\b\d+\s*(?:\*\*|\^)\s*\d+\b", re.I)

_WHICH_PLURAL = lazy_pattern(r"^\s*which\s+([a-z]+)\s+[a-z]+", re.I)
_WHICH_COMPOUND = lazy_pattern(r"^\s*which\s+[a-z-]+\s+([a-z]+)\s+([a-z]+)\b", re.I)


# "What is the default port of X?", "How many retries …": the attribute of something the question asks for
_ATTRIBUTE = lazy_pattern(
    r"^\s*(?:what|which)\s+(?:is|are|was|were)\s+(?:the|a|an)\s+(?:[^\W_]+\s+){0,2}?([^\W_]+)\s+(?:of|for|in|at)\b"
    r"|^\s*how\s+(?:many|much)\s+([^\W_]+)",
    re.I,
)
# a field given under a label: "**Penalty**: a fine", "**Default:** 8", or "Penalty: a fine" opening a sentence
_BOLD_LABEL = lazy_pattern(r"(?:\*\*|__)([A-Za-z][A-Za-z -]{0,30}?):?(?:\*\*|__)\s*:?\s")
_PLAIN_LABEL = lazy_pattern(r"(?:^|(?<=[.!?]\s))([A-Z][A-Za-z -]{0,30}?):\s")


def asked_attribute(question: str) -> str:
    """The attribute the question asks of something ("What is the penalty for a late return?" → penalty),
    lower-cased; "" when it asks no attribute."""
    m = _ATTRIBUTE.match(question)
    return (m.group(1) or m.group(2) or "").lower() if m else ""


def labelled_fields(text: str) -> list[tuple[str, int, int]]:
    """The fields the text gives under labels: (label, start, end), each running from its label to the
    next label or the end of the text."""
    at = {m.start(): m.group(1) for pattern in (_PLAIN_LABEL, _BOLD_LABEL) for m in pattern.finditer(text)}
    starts = sorted(at)
    if not starts:
        return []
    return [(at[a], a, b) for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def field_named(fields: list[tuple[str, int, int]], attribute: str) -> tuple[int, int] | None:
    """Where, of `labelled_fields`, the attribute is given: a label of at most three words whose last word is
    the attribute ("**Penalty**: a fine of two coins" for "What is the penalty for …?")."""
    if not attribute:
        return None
    asked = stems([attribute])
    for label, start, end in fields:
        words = re.findall(r"[A-Za-z]+", label)
        if 0 < len(words) <= 3 and stems([words[-1].lower()]) == asked:
            return start, end
    return None


def labels_attribute(text: str, attribute: str) -> bool:
    """The text gives the attribute as a labelled field (`field_named`)."""
    return bool(attribute) and field_named(labelled_fields(text), attribute) is not None


def asked_kind(question: str, answer_type: str) -> tuple[str, str]:
    """(the fine kind the question asks for, the word it turns on) for an `entity` (or untyped) question;
    ("", "") when the question form says nothing finer. The word is the relation's participle or the
    plural noun naming the instances."""
    if answer_type not in ("entity", "", "definition"):
        return "", ""
    q = " ".join(question.split())
    if answer_type == "entity" and _CODE_ASKED.match(q):
        return CODE, ""
    if _PURPOSE_ASKED.match(q):
        return PURPOSE, ""
    if _EVALUATION_ASKED.match(q):
        return EVALUATION, ""
    if (m := _RELATION_ASKED.match(q)) is not None:
        return RELATION, m.group(1).lower()
    noun = asked_noun(q) or _leading_plural(q)
    if (
        answer_type == "entity"
        and noun
        and looks_plural(noun)
        and noun not in TYPE_ONLY_NOUNS
        and asked_type_noun(q)[0] is None
    ):
        return INSTANCES, noun
    if (
        answer_type == "entity"
        and noun
        and noun not in TYPE_ONLY_NOUNS
        and asked_type_noun(q)[0] is None
        and _asked_directly(q, noun)
    ):
        return VALUE, noun
    return "", ""


def _asked_directly(question: str, noun: str) -> bool:
    """The noun heads the wh-phrase itself ("What timestamp does …", "Under which domain is …"), not a
    word of a clause after it ("What happens if X is set?")."""
    m = _WH_PHRASE.match(question)
    return m is not None and noun in m.group(1).lower().split()


def _leading_plural(question: str) -> str | None:
    """The plural noun right after "which" ("Which editors ship …" → editors) or after one modifier of it,
    where `asked_noun` cannot tell the noun phrase from the verb without an auxiliary."""
    m = _WHICH_PLURAL.match(question)
    if m is not None and looks_plural(m.group(1).lower()):
        return m.group(1).lower()
    # "Which web browsers keep …": a modifier, then a plural head whose verb agrees with it (no -s; "Which
    # file contains settings" has a singular head, its verb takes -s; "contains the" is no verb of a plural)
    c = _WHICH_COMPOUND.match(question)
    verb = c.group(2).lower() if c is not None else ""
    if c is not None and looks_plural(c.group(1).lower()) and terms(verb) and not looks_plural(verb):
        return c.group(1).lower()
    return None


def kind_stated(kind: str, word: str, answer: str, question: str) -> bool:
    """Whether the quoted `answer` holds what the fine `kind` asks for (True for no kind)."""
    if kind == PURPOSE:
        return _PURPOSE_STATED.search(_without_question(answer, question)) is not None
    if kind == EVALUATION:
        # the question's own words count: "the downside is …" names it as the question does
        return _EVALUATION_SAID.search(answer) is not None
    if kind == CODE:
        return any(m.group(0) not in question for m in _CODE_STATED.finditer(answer))
    if kind == RELATION:
        return bool(set(stems([word])) & set(stems(re.findall(r"[a-z]+", answer.lower()))))
    if kind == VALUE:
        return _noun_written(word, answer) or _value_beside_question(answer, question)
    if kind == INSTANCES:
        if _only_nonspecific(word, answer):
            return False  # "Some editors ship it" for "which editors …": members of the class, none named
        asked = {w.lower() for w in re.findall(r"[\w.-]+", question)}
        return any(m.group(0).strip('`"').lower() not in asked for m in _NAMED.finditer(answer))
    return True


def kind_said(kind: str, word: str, text: str, question: str) -> bool:
    """Whether `text` says what the fine `kind` asks for plainly enough to rank passages by (False for no
    kind): a purpose in so many words ("is used to", "allows", "the purpose of"); the other kinds as
    kind_stated tests them."""
    if kind == PURPOSE:
        return _PURPOSE_SAID.search(_without_question(text, question)) is not None
    # the asked noun's value (VALUE) is a test of `success` only: writing the noun is no reason to rank up
    return bool(kind) and kind != VALUE and kind_stated(kind, word, text, question)


def _only_nonspecific(noun: str, answer: str) -> bool:
    """Every mention of the asked plural `noun` in the answer is led by a non-specific quantifier and no
    enumeration follows: the answer says that some members of the class exist, not which ones."""
    said = list(re.finditer(rf"\b{re.escape(noun)}\b", answer, re.I))
    if not said or _ENUMERATED.search(answer):
        return False
    ends = {q.end() for q in re.finditer(_NONSPECIFIC + rf"{re.escape(noun)}\b", answer, re.I)}
    return all(m.end() in ends for m in said)


def _without_question(answer: str, question: str) -> str:
    """The answer less the words it shares with the question: "… for …" in a name the question writes is no
    statement of use."""
    asked = {w.lower() for w in re.findall(r"\w+", question)}
    return " ".join(w for w in re.findall(r"\w+", answer) if w.lower() not in asked)


def _noun_written(noun: str, answer: str) -> bool:
    """The answer writes the asked noun: a form of it, or it closed up in a compound or an identifier
    ("time stamp", "time-stamp" for "timestamp"; `domain-name` for "domain")."""
    said = re.findall(r"[a-z0-9]+", answer.lower())
    if set(stems([noun])) & set(stems(said)):
        return True
    closed = re.sub(r"[\s_-]+", "", answer.lower())
    return noun.lower() in closed


def _value_beside_question(answer: str, question: str) -> bool:
    """A quoted sentence that states a word of the question holds a value naming itself that the question
    does not write ("… see L<Text::Wrap>." for "which module …"): the instance stated without the class
    noun. A value in a sentence about something else ("Support the 6502 in cpu.S.") is not it."""
    asked_terms = set(stems(terms(question)))
    asked = {w.lower() for w in re.findall(r"[\w./:-]+", question)}
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", answer):
        if not asked_terms & set(stems(terms(sentence))):
            continue
        plain = _MEASURE.sub(" ", sentence)
        if any(m.group(0).strip('`"“”').lower() not in asked for m in _VALUE.finditer(plain)):
            return True
    return False
