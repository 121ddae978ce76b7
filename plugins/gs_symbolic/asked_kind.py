"""Whether a quoted answer states a constituent of the kind an untyped question asks for.

answer_form.py checks the answers whose kind has a shape (a figure, a version, a default, a file). The
other questions ask for a kind of clause rather than a kind of token, and a passage about the asked thing
may lack it: it repeats the question's words and states something else about them. Read from the
clause structure of the quoted text, with the lexicon's command verbs and grammar words (never a document's
words):
- "how do I …" (a procedure) asks for something to do: a command or code, an instruction (an imperative
  clause, not one that only directs the reader: "Note that …", "move on to the next step"), a means ("you
  can …", "it is possible to …", "by giving …", an obligation) or an option's own entry. A statement of fact about the
  task ("`DROP SEQUENCE` will fail in some corner cases.") does not tell what to do.
- "what happens (to X) if/when C?" asks for an outcome under C: the answer states C as its condition or
  circumstance (a conditional, temporal or "with" clause, "…, otherwise", a gerund subject, or the entry's label) by one of
  C's words. A sentence about the same things under another circumstance ("… when the image is used as the
  base for another build" for "if a trigger fails") or under none states no outcome of C.
- "what is X?" asks for what X is: a predication of X by a copula or a defining verb ("X is a …", "X, a …",
  "X refers to …") or X's entry; "X supports Python 3.10+." says something of X, not what it is.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import mentions_type
from mrpvm.plugins.sdk.lexicon import IMPERATIVE_VERBS, word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import sentences, terms

from .material import Outcome
from .question import Question

# imperatives that direct the reader within the text, not to the task: "Note that …", "Notice …", "See …"
_READER_VERBS = word_set("note notice see")
_COMMAND_VERBS = IMPERATIVE_VERBS - _READER_VERBS
_FENCE = lazy_pattern(r"```")
# a clause's first word: the sentence's, a list item's, or after a clause break or "then"/"and"
_CLAUSE_START = lazy_pattern(r"(?:^\s*(?:\d+[.)]|[-*])?\s*|[,;:]\s+|\b(?:then|and)\s+)([a-z]+)\b(?!-)", re.I)
_MODAL = lazy_pattern(r"\b(?:can|could|may|might|will|would|shall|should|must)\b", re.I)
# "move on to the next step", "skip this section", "proceed to the following page": the object is a part of
# the text itself (a navigation, not an action on the task)
_TEXT_PART = lazy_pattern(
    r"(?:\s+(?:on|to|back|ahead|over))*(?:\s+(?:the|this|that|these|a|next|previous|following|last|first))*"
    r"\s+(?:steps?|sections?|chapters?|pages?|paragraphs?|below|above)\b",
    re.I,
)
# a means: what the reader can or must do ("you can run …", "it is possible to include …", "by giving …")
_MEANS = lazy_pattern(
    r"\b(?:you|one|we|users?)\s+(?:can|could|may|might|should|must|need\s+to|have\s+to"
    r"|will\s+(?:have|need)\s+to|'ll\s+(?:have|need)\s+to)\b"
    r"|\bit(?:'s|’s|\s+is|\s+(?:may|might|can|could|will|would)\s+be)\s+(?:also\s+|[a-z]+ly\s+)?"
    r"(?:necessary|possible|recommended|best|easiest|enough)\s+to\b"
    # an obligation is a rule to follow: "the byte-compiled modules must not be shipped"
    r"|\b(?:must|should|shall|ought\s+to|has\s+to|have\s+to|needs?\s+to)\b"
    r"|\bby\s+[a-z]+ing\b"
    # "the easiest way to … is to use …": a means named as the way
    r"|\b(?:way|ways|solution|method|approach|workaround)\b[^.;:!?]*?\b(?:is|are)\s+to\s+[a-z]+",
    re.I,
)
_CODE_LABEL = lazy_pattern(r"^\s*(?:\*\*)?`([^`\n]*)`(?:\*\*)?(?::|\s+—)\s*")
_ONLY_CODE = lazy_pattern(r"^[^`]{0,24}`[^`]+`[\s.:)]*(?:\([^()]*\)[\s.]*)?$")

# "what happens (to X) if/when C?": C
_HAPPENS = lazy_pattern(
    r"^\s*what\s+(?:happens|will\s+happen|would\s+happen)\b.*?\b(?:if|when|whenever|once|after|before|unless)\s+(.+?)\??\s*$",
    re.I,
)
# what opens a condition or a circumstance in an answer, up to the clause's end
_CIRCUMSTANCE = lazy_pattern(
    r"\b(?:if|when|whenever|once|after|before|unless|with|without|on|upon|during|until)\b([^,.;:!?]*)", re.I
)
_GERUND_SUBJECT = lazy_pattern(r"^\W*[A-Za-z]+ing\b")
_OTHERWISE = lazy_pattern(r"([^.;:!?]*?),?\s+otherwise\b", re.I)
_LABEL_END = lazy_pattern(r"^(.{1,80}?)(?::\s|\s+—\s)")

# "What is X?" / "What are Xs?": X (one word, as answer_types' definition question)
_WHAT_IS = lazy_pattern(r"^\s*what\s+(?:is|are)\s+(?:an?\s+)?([\w.+-]+)\s*\??\s*$", re.I)
_DEFINING = lazy_pattern(
    r"\s*(?:\([^()]*\)\s*)?(?:is|are|was|were|refers?\s+to|means?|stands?\s+for|denotes?|describes?|,\s*(?:an?|the)\b|:|—|-)",
    re.I,
)

_QUOTING = frozenset({"sentences", "procedure"})  # outcomes quoting the documents' sentences or steps
NOTHING_TO_DO = "states nothing to do"
NO_OUTCOME = "states no outcome of the asked condition"
NOT_DEFINED = "does not say what it is"


def weaken_unstated_kind(q: Question, out: Outcome) -> None:
    """A `success` answer quoting sentences (or a procedure's steps) that state no constituent of the asked kind becomes weak (the
    best candidate, reported as uncertain), the reason appended to its evidence."""
    if out.kind in _QUOTING and out.supported and (lack := kind_unstated(q, out.markdown)):
        out.supported = False
        out.confidence = "low"
        out.evidence += f"; {lack}"


def kind_unstated(q: Question, answer: str) -> str:
    """Why the quoted `answer` (labels included) states no constituent of the kind the question asks for;
    "" when it does, or when the question asks for no such kind."""
    focus = q.focus or q.text
    if q.answer_type == "procedure" and not instructs(answer):
        return NOTHING_TO_DO
    if (m := _HAPPENS.match(focus)) and not states_condition(set(terms(m.group(1))), answer):
        return NO_OUTCOME
    if q.answer_type == "definition" and (m := _WHAT_IS.match(focus)) and not defines(m.group(1), answer):
        return NOT_DEFINED
    return ""


def instructs(answer: str) -> bool:
    """The answer tells what to do: code, a command line, an option's entry, an instruction or a means."""
    if _FENCE.search(answer):
        return True  # a code block
    for s in sentences(answer) or [answer]:
        label = _CODE_LABEL.match(s)
        if label and mentions_type(label.group(1), "command"):
            return True  # an option's own entry: "`-g, --listed-incremental=FILE`: Handle …"
        body = s[label.end() :] if label else s
        if _ONLY_CODE.match(body) or _MEANS.search(body) or imperative(body):
            return True
    return False


def imperative(text: str) -> bool:
    """A clause opens with a command verb, is not governed by a modal ("applications can then use …") and
    acts on the task, not on the text ("move on to the next step")."""
    text = text.strip()
    return any(
        m.group(1).lower() in _COMMAND_VERBS
        and not (m.group(0)[0].isalpha() and _MODAL.search(text, 0, m.start()))
        and not _TEXT_PART.match(text, m.end())
        for m in _CLAUSE_START.finditer(text)
    )


def states_condition(asked: set[str], answer: str) -> bool:
    """The answer states the asked condition (`asked`: its terms) as a condition or circumstance: in a
    conditional, temporal or prepositional clause, before "otherwise", or in the label its entry opens
    with."""
    if not asked:
        return True
    spans: list[str] = []
    for s in sentences(answer) or [answer]:
        if label := _LABEL_END.match(s):
            spans.append(label.group(1))
        spans += [m.group(0) for m in _CIRCUMSTANCE.finditer(s)]
        spans += [m.group(1) for m in _OTHERWISE.finditer(s)]
        if _GERUND_SUBJECT.match(s):
            spans.append(
                s
            )  # "Using a pool that JOB_POOLS does not define causes an error": an event as subject
    return any(asked & set(terms(span)) for span in spans)


def defines(name: str, answer: str) -> bool:
    """The answer says what `name` is: the name followed by a copula or a defining verb, an apposition or
    its entry's label mark."""
    for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])[`*]*", answer, re.I):
        if _DEFINING.match(answer, m.end()):
            return True
    return False
