"""Split a user turn into pieces (one question, task, instruction or statement each), with offsets.

Boundaries: numbered or bulleted lines ("1.", "Q2:", "- "), blank lines, sentence ends, every '?', and
inside a sentence the joints that start a second question or task: "; ", ", and also", ", also",
"and what/how/why/...", "and explain/describe/compare/...".
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.lexicon import IMPERATIVE_VERBS, word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import sentence_spans, trim_span

from .acts import POLITE, WH, YES_NO

_I = re.IGNORECASE
_LINE = lazy_pattern(r"[^\n]*\n?")
_MARKER = lazy_pattern(
    r"^\s*(?:[-*+•]|\d{1,2}[.)]|\(\d{1,2}\)|[a-z][.)]|q\s?\d{1,2}\s*[:.)]|question\s+\d{1,2}\s*[:.)]"
    r"|task\s+\d{1,2}\s*[:.)]|part\s+\d{1,2}\s*[:.)])\s*",
    _I,
)
_CONNECTIVE = lazy_pattern(
    r"^(?:and\s+also|and\s+then|and|also|additionally|plus|then|next|finally|lastly|secondly|second|thirdly|third"
    r"|firstly|first|furthermore|moreover|besides|in addition|separately|on top of that|oh,? and)\b[,:]?\s*",
    _I,
)
ACT_VERBS = (
    "explain|describe|compare|contrast|define|identify|name|list|summari[sz]e|outline|discuss|analy[sz]e|evaluate"
    "|assess|verify|check|confirm|diagnose|troubleshoot|recommend|suggest|tell me|give me|show me|state|justify"
    "|predict|construct|determine|calculate|estimate|find|propose|walk me through|clarify|illustrate|trace"
)
_TASK_START = lazy_pattern(
    rf"^(?:{ACT_VERBS}|help me|i (?:want|need|would like|'d like) to (?:know|understand|learn|find out|see)"
    r"|i(?:'m| am) (?:wondering|curious)|i wonder|tell|give|show|write|create|build|implement|draft|design|plan"
    r"|translate|convert|fix|set up|install|configure|deploy|make)\b",
    _I,
)
_SPLITS: tuple[tuple[re.Pattern[str], int], ...] = (
    (lazy_pattern(r"\s*;\s+(?:and\s+)?(?:also\s+)?", _I), 3),
    (lazy_pattern(r",?\s+and\s+also\s+|,\s+(?:and\s+|but\s+)?also\s+(?=[a-z])", _I), 2),
    (
        lazy_pattern(
            r",?\s+(?:and|but|or)\s+(?=(?:what|how|why|who|whom|which|where|when|is|are|was|were|do|does|did|can"
            r"|could|would|should|will)\b)",
            _I,
        ),
        2,
    ),
    (lazy_pattern(rf",?\s+and\s+(?=(?:{ACT_VERBS})\b)", _I), 2),
)
_WORDS = lazy_pattern(r"\w[\w'-]*")


class Span(msgspec.Struct):
    start: int
    end: int
    block: int


def _line_blocks(text: str) -> list[tuple[int, int]]:
    """Runs of lines; a blank line or a line opening with a list/question marker starts a new run."""
    blocks: list[tuple[int, int]] = []
    start = end = -1
    for m in _LINE.finditer(text):
        a, b = m.start(), m.end()
        if a == b:
            break
        line = text[a:b]
        if not line.strip():
            if start >= 0:
                blocks.append((start, end))
            start = -1
            continue
        marker = _MARKER.match(line)
        if marker and not re.match(r"^\s*\d+\.\d", line):
            if start >= 0:
                blocks.append((start, end))
            start, end = a + marker.end(), b
            continue
        if start < 0:
            start = a
        end = b
    if start >= 0:
        blocks.append((start, end))
    return [span for span in (trim_span(text, a, b) for a, b in blocks) if span[1] > span[0]]


def _question_marks(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Split after every '?' followed by more text (lower-case continuations included)."""
    out: list[tuple[int, int]] = []
    cursor = a
    for m in re.finditer(r"\?[\"'”’)]*\s+", text[a:b]):
        cut = a + m.end()
        out.append(trim_span(text, cursor, cut))
        cursor = cut
    out.append(trim_span(text, cursor, b))
    return [s for s in out if s[1] > s[0]]


def _n_words(text: str) -> int:
    return len(_WORDS.findall(text))


def _coordination(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Split one sentence where a second question or task starts."""
    for pattern, min_right in _SPLITS:
        for m in pattern.finditer(text, a, b):
            left, right = text[a : m.start()], text[m.end() : b]
            if _n_words(left) >= 3 and _n_words(right) >= min_right and looks_like_request(left):
                head = trim_span(text, a, m.start())
                return [head, *_coordination(text, m.end(), b)]
    return [(a, b)]


def clean_lead(text: str) -> str:
    """Drop list markers and leading connectives ("Also, ...", "2) ...")."""
    body = _MARKER.sub("", text, count=1).strip()
    for _ in range(2):
        body = _CONNECTIVE.sub("", body, count=1).strip()
    return body


def looks_like_request(text: str) -> bool:
    """A question or a task: ends with '?', opens with a wh-word, an auxiliary, or an act/imperative verb."""
    body = clean_lead(text)
    if body.rstrip().endswith("?"):
        return True
    body = POLITE.sub("", body, count=1)
    if WH.match(body) or YES_NO.match(body) or _TASK_START.match(body):
        return True
    first = _WORDS.match(body)
    return first is not None and first.group(0).lower() in IMPERATIVE_VERBS and body[:1].isupper()


def split_turn(text: str) -> list[Span]:
    spans: list[Span] = []
    for k, (a, b) in enumerate(_line_blocks(text)):
        for s, e in sentence_spans(text, a, b):
            for qa, qb in _question_marks(text, s, e):
                for ca, cb in _coordination(text, qa, qb):
                    ca, cb = trim_span(text, ca, cb)
                    if cb > ca:
                        spans.append(Span(ca, cb, k))
    return spans


_PRONOUNS = word_set("he she it they him her them his its their theirs hers this these those")
_WORD = lazy_pattern(r"[A-Za-z][\w'-]*")


def sentence_case(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if text else text


def ensure_end(text: str, question: bool) -> str:
    if text and text[-1] not in ".?!":
        return text + ("?" if question else ".")
    return text


def has_pronoun(text: str) -> bool:
    return any(w.lower() in _PRONOUNS for w in _WORD.findall(text))
