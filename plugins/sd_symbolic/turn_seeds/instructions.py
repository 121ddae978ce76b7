"""Instructions in a user turn that shape how to answer rather than what to answer.

Each cue has a kind, the phase(s) that must see it (PhaseScopes) and, for output cues, the Output it
forces: output format -> gs-plugin; validation rules -> val-plugin (+ gs-plugin); planning hints ->
mrp-plan-plugin; decomposition hints -> frame (+ gs-plugin, since they also shape the answer).
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS

_I = re.IGNORECASE


class Cue(msgspec.Struct, frozen=True):
    kind: str  # output | validation | planning | decomposition
    scopes: tuple[str, ...]
    output: str | None  # the Output it forces, if any
    pattern: re.Pattern[str]


class Found(msgspec.Struct, frozen=True):
    cue: Cue
    start: int
    end: int
    text: str


_OUT = ("gs-plugin",)
_VAL = ("val-plugin", "gs-plugin")
_PLAN = ("mrp-plan-plugin",)
_FRAME = ("frame", "gs-plugin")

CUES: tuple[Cue, ...] = (
    Cue(
        "output",
        _OUT,
        "yes/no",
        lazy_pattern(
            r"(?:\b(?:answer|respond|reply)(?:\s+\w+){0,3}?\s+)?(?:(?:with|using|in)\s+)?(?:a\s+)?(?:simple\s+)?"
            r"\byes(?:\s+or\s+|\s*/\s*)no\b(?:\s+only)?",
            _I,
        ),
    ),
    Cue(
        "output",
        _OUT,
        "single word",
        lazy_pattern(
            r"(?:\b(?:answer|respond|reply)(?:\s+\w+){0,2}?\s+)?(?:\b(?:with|using|in)\s+)?(?:a\s+|just\s+|only\s+)?"
            r"\b(?:single|one|1)[- ]word\b(?:\s+(?:answers?|responses?|only))*",
            _I,
        ),
    ),
    Cue(
        "output",
        _OUT,
        "list",
        lazy_pattern(
            r"\b(?:as|in|into|using)\s+(?:a\s+)?(?:bulleted\s+|numbered\s+|bullet\s+)?(?:list|bullet points|bullets|table)\b",
            _I,
        ),
    ),
    Cue(
        "output",
        _OUT,
        "brief",
        lazy_pattern(
            r"\bbe\s+(?:brief|concise|short|succinct)\b|\bbriefly\b|\bkeep\s+it\s+(?:short|brief|concise)\b"
            r"|\b(?:in|with(?:in)?|using)\s+(?:one|a single|1|two|2|three|3|a few)\s+sentences?\b|\bshort (?:answers?|summary|summaries|description|overview)\b"
            r"|\bconcise(?:ly)?\b|\bin\s+(?:a few|under \d+|\d+|less than \d+|fewer than \d+)\s+words\b|\btl;?dr\b",
            _I,
        ),
    ),
    Cue(
        "output",
        _OUT,
        "detailed",
        lazy_pattern(
            r"\b(?:provide|give|write)?\s*(?:detailed|thorough|in-depth|comprehensive|elaborate|extensive)"
            r"(?:,?\s+\w+){0,2}?\s+(?:answers?|explanations?|responses?|analysis)\b|\bin\s+(?:great\s+|full\s+)?detail\b"
            r"|\belaborate(?:ly)?\b(?!\s+on)",
            _I,
        ),
    ),
    Cue(
        "validation",
        _VAL,
        None,
        lazy_pattern(
            r"\bcite\s+(?:your\s+|the\s+|all\s+)?(?:sources?|evidence|references?)\b|\binclude\s+(?:references|citations|sources)\b"
            r"|\bwith\s+(?:citations|references|sources)\b|\bground(?:ed)?\s+(?:your\s+|the\s+|all\s+|each\s+)?"
            r"(?:answers?|reasoning|claims?|responses?|explanations?)\b|\bgrounded\b"
            r"|\b(?:only\s+(?:use|rely\s+on)|based\s+(?:only|solely|strictly|exclusively)\s+on)\s+(?:the\s+)?"
            r"(?:provided|given|above|supplied|available)?\s*(?:context|text|story|document|sources?|information|evidence)\b"
            r"|\bdo(?:n't|\s+not)\s+(?:guess|speculate|make\s+(?:anything|things|it)\s+up|invent|hallucinate)\b"
            r"|\bno\s+speculation\b|\bif\s+you\s+(?:don't|do\s+not)\s+know\b",
            _I,
        ),
    ),
    Cue(
        "planning",
        _PLAN,
        None,
        lazy_pattern(
            r"\buse\s+(?:the\s+)?(?:deep|fast|cheap|symbolic|thorough|quick|llm|heavy|light|depth)[- ]"
            r"(?:solver|planner|path|mode|model|retriever|plugin|pipeline|strategy)\b"
            r"|\buse\s+(?:kb|gs|sd|val|planner)-[\w-]+\b|\b(?:quickly|as\s+fast\s+as\s+possible|cheaply|no\s+llm"
            r"|without\s+(?:an?\s+|the\s+)?llm|take\s+your\s+time|think\s+(?:hard|carefully|deeply)|thoroughly"
            r"|deep\s+(?:search|reasoning|dive))\b",
            _I,
        ),
    ),
    Cue(
        "decomposition",
        _FRAME,
        "steps",
        lazy_pattern(
            r"\bstep[- ]by[- ]step\b|\btrace\s+(?:every|each|all|the)(?:\s+intermediate)?\s+steps?\b"
            r"|\b(?:every|each)\s+intermediate\s+step\b|\bbreak\s+(?:it|this|that|the\s+\w+)\s+down\b"
            r"|\bone\s+(?:step|part)\s+at\s+a\s+time\b|\b(?:each|every)\s+part\s+separately\b"
            r"|\bshow\s+(?:your|the|all)\s+(?:reasoning|work|steps)\b|\bsub-?questions\b|\bdecompose\b",
            _I,
        ),
    ),
)

# Verbs that only ever introduce an instruction. Task verbs (give, provide, write, show, include) count as
# instructions only when nothing but the cue follows them ("Provide detailed answers."), since "Give me a
# short summary of the report" is a task with an output constraint.
_INSTRUCTION_VERBS = lazy_pattern(
    r"^(?:please\s+)?(?:answer|respond|reply|be|keep|use|cite|ground|format|limit|make\s+sure|only|avoid|do\s+not"
    r"|don't|think|take|trace|break|write\s+(?:your|the)\s+answers?|questions?|note|remember|stay|stick|focus)\b",
    _I,
)
_FILLER = word_set(
    """answer answers answered respond reply please only with in using each all every following questions
    question below above word words format your the a an be provide give keep make sure it them this
    these those and or each response responses just simple short form must should always note remember
    return following output"""
)
_WORD = lazy_pattern(r"[A-Za-z][\w'-]*")


_NEGATED = lazy_pattern(r"(?:no|without)\s", _I)
_ATTACHED = lazy_pattern(r"\w\s+$")
_QUESTION_TAIL = lazy_pattern(r"^[\s.!?]*\?[\s.!?]*$")


def _negated_object(text: str, start: int, end: int) -> bool:
    """ "Which plugin uses no LLM?": a trailing "no …"/"without …" bound to the word before it (no comma)
    is what the question asks about, not how to answer it."""
    return bool(
        _NEGATED.match(text, start) and _ATTACHED.search(text[:start]) and _QUESTION_TAIL.match(text[end:])
    )


def find_cues(text: str) -> list[Found]:
    """Every instruction cue in a text, in order; cues of one kind never overlap ("detailed, grounded answers"
    is both an output and a validation cue)."""
    found: list[Found] = []
    for cue in CUES:
        for m in cue.pattern.finditer(text):
            overlaps = any(f.cue.kind == cue.kind and f.start < m.end() and m.start() < f.end for f in found)
            if _negated_object(text, m.start(), m.end()):
                continue
            if m.end() > m.start() and not overlaps:
                found.append(Found(cue, m.start(), m.end(), m.group(0).strip()))
    found.sort(key=lambda f: f.start)
    return found


def is_instruction_sentence(text: str, found: list[Found]) -> bool:
    """A sentence that is about how to answer: a cue plus little else, or an instruction verb with a cue."""
    if not found:
        return False
    rest = text
    for f in reversed(found):
        rest = rest[: f.start] + " " + rest[f.end :]
    content = [w for w in _WORD.findall(rest) if w.lower() not in STOPWORDS and w.lower() not in _FILLER]
    if len(content) <= 1:
        return True
    return bool(_INSTRUCTION_VERBS.match(text.strip())) and not text.rstrip().endswith("?")


_EDGE_SEPARATORS = " \t,;:—–-()"


def strip_edge_cues(text: str, found: list[Found]) -> tuple[str, list[Found]]:
    """Remove cues at the start ('Answer yes or no: ...') or the end ('..., step by step.') of a question.

    Returns the cleaned text and the cues removed; cues inside the sentence stay in the text.
    """
    removed: list[Found] = []
    body = text
    for f in sorted(found, key=lambda f: -f.start):
        tail = body[f.end :].strip(_EDGE_SEPARATORS + ".!?")
        if not tail:
            head = body[: f.start].rstrip(_EDGE_SEPARATORS)
            punct = body[f.end :].strip(_EDGE_SEPARATORS)
            body = head + (punct[:1] if punct[:1] in "?.!" else "")
            removed.append(f)
    for f in sorted(found, key=lambda f: f.start):
        if f in removed:
            continue
        idx = body.find(f.text)
        if idx < 0:
            continue
        head = body[:idx].strip(_EDGE_SEPARATORS)
        if not head or head.lower() in ("please", "answer", "please answer"):
            after = body[idx + len(f.text) :].lstrip(_EDGE_SEPARATORS)
            if after:
                body = after
                removed.append(f)
    return body.strip(), removed
