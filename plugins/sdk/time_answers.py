"""Time in questions and answers: a number asked for that is no span of time ("which port …" is not answered
by "after 20 minutes"), a "when" question, which a condition or a span answers as well as a date does, and a
"how often" question, which a frequency answers ("weekly", "every morning") as well as a figure does."""

from __future__ import annotations

import re

from .answer_shapes import DURATION, NUMBER, mentions_type
from .answer_types import asked_clause, asked_type_noun
from .lexicon import word_set
from .patterns import lazy_pattern

# Measures that no span of time states: "which port", "what size" are not answered by "expires after 20
# minutes" (a duration answers questions about a period only: NUM:period in Li & Roth's question taxonomy).
_UNTIMED_MEASURES = word_set(
    """port ports size sizes width height depth weight price cost percentage percent capacity temperature
    memory ram space score ratio"""
)


def asks_untimed_number(question: str) -> bool:
    """Whether the question asks for a number that is no duration ("Which port does ssh use …?")."""
    kind, noun = asked_type_noun(question)
    return kind == "number" and noun in _UNTIMED_MEASURES


_MAN_REFERENCE = lazy_pattern(r"\b[\w.-]+\(\d\w?\)")  # "xauth(1)": a manual page and its section


# "When does X happen?" asks for a time or for the circumstance X happens in: a temporal or conditional
# clause ("if …", "once …", "until …") or a span ("after 48 hours") answers it as well as a date does
_CIRCUMSTANCE = lazy_pattern(
    r"\b(?:if|unless|once|after|before|until|till|whenever|when|while|during|as soon as|as long as"
    r"|provided(?:\s+that)?)\b",
    re.I,
)
_FUTURE_ASKED = lazy_pattern(r"^when\s+(?:will|shall|is\s+\S+\s+(?:scheduled|planned|expected|due))\b", re.I)


def asks_circumstance(question: str) -> bool:
    """A "when" question about no future event ("When does the vote pass?", not "When will 3.0 ship?",
    whose answer is a date or a release)."""
    asked = asked_clause(question).strip()
    return asked[:5].lower() == "when " and _FUTURE_ASKED.match(asked) is None


def states_circumstance(text: str) -> bool:
    """Whether `text` states when something holds: a date or release, a span, or a temporal or conditional
    clause."""
    return (
        _CIRCUMSTANCE.search(text) is not None
        or DURATION.search(text) is not None
        or mentions_type(text, "date")
    )


def mentions_untimed_number(text: str) -> bool:
    """Whether `text` holds a number outside its durations and manual references ("port 6010", not
    "expires after 20 minutes" nor "see xauth(1)")."""
    return NUMBER.search(DURATION.sub(" ", _MAN_REFERENCE.sub(" ", text))) is not None


# "How often …?" asks for a frequency (NUM:period's sibling in Li & Roth's taxonomy): "weekly", "every morning",
# "twice a year", "always" answer it as a figure does
_FREQUENCY = lazy_pattern(
    r"\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually|every|each|once|twice"
    r"|thrice|times|always|never|seldom|rarely|sometimes|usually|regularly|occasionally|continuously)\b",
    re.I,
)


def asks_frequency(question: str) -> bool:
    """A "how often" question."""
    return asked_clause(question).strip()[:10].lower() == "how often "


def states_frequency(text: str) -> bool:
    """Whether `text` states how often something happens ("weekly", "every morning", "twice a year")."""
    return _FREQUENCY.search(text) is not None
