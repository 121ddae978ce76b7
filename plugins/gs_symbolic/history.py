"""A change history's entries: records of events, not statements of what a thing is or does.

1. A change log writes an entry as a version label and a change verb: "2.4.0 - added `colour`", "v1.2: Removed
   the --fast flag", "0.9 (2019-04-01) — deprecated". Such a line records when something happened to a
   setting; it says nothing of the setting's value, default or behaviour, while it shares the setting's name
   with any question about them. It answers a question about the history ("In which version was colour
   added?", "When was --fast removed?"), not "Which colour does a new card get?" (`change_record`,
   `asks_history`).
2. A version a sentence gives to another event: under "release 1.12", "ftp no longer hangs on empty lines.
   [bug introduced in 1.9]" was fixed in 1.12; 1.9 is where the bug came in. For "In which version was X
   fixed?" the version the sentence attributes to a different event ("introduced in", "since") is not the
   answer; the release heading the entry stands under is (`other_events_versions`).

The change verbs are the categories of a change log (Keep a Changelog's added, changed, deprecated, removed,
fixed, and the usual others: introduced, renamed, dropped, replaced, updated, deleted, moved): a closed class
of the genre, not of a document.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import mentions_type
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import stems

from .question import Question

_VERBS = r"added|changed|deprecated|removed|fixed|introduced|renamed|dropped|replaced|updated|deleted|moved"
_CHANGE_STEMS = frozenset(stems(_VERBS.split("|")))
_VERSION = r"(?:v(?:ersion)?\s*)?\d+(?:\.\d+)+[\w.+~-]*"
# "2.4.0 - added `colour`", "v1.2: Removed …", "0.9 (2019-04-01) — deprecated", "* 1.0.2: Added -K …"
_RECORD = lazy_pattern(
    rf"^\s*(?:[-*+]\s+)?{_VERSION}(?:\s*\([^()\n]*\))?\s*[-–—:]\s*(?:{_VERBS})\b",
    re.I,
)
# "[bug introduced in widget-3.1.4]", "broken since 2.1", "regression from v3.0": a version given to an
# event named by the participle before it
_EVENT_VERSION = lazy_pattern(
    r"\b(?!(?:been|when|then|even|often|seen)\b)([a-z]+(?:ed|en))\s+(?:in|since|with|by)\s+(?:[\w-]*?[-\s])??"
    rf"({_VERSION}|\d+(?:\.\d+)*)",
    re.I,
)
_SINCE = lazy_pattern(rf"\bsince\s+(?:[\w-]*?[-\s])??({_VERSION})", re.I)


# the predicate of a question about a release or a time, which names the event asked about: "Which release
# *added* …", "When was X *released*?", "In which version was X *added*?" (a past form after the wh-phrase, or
# ending a passive clause)
_EVENT = lazy_pattern(
    r"^\s*(?:in\s+|since\s+)?(?:which|what)\s+(?:[\w-]+\s+){1,2}?([a-z]+ed)\b"
    r"|\b(?:was|were|is|are|has|have|had|be|been)\b[^?]*?\b([a-z]+(?:ed|en))\s*\??\s*$",
    re.I,
)


def asked_event(question: str) -> str:
    """The past participle naming the event a question about a release or a time asks of ("In which version
    was X *fixed*?" → "fixed"), lower-cased; "" when it names none."""
    event = _EVENT.search(question)
    return next((g.lower() for g in event.groups() if g), "") if event else ""


def change_record(text: str) -> bool:
    """The sentence is a change log's entry: a version label, then a change verb ("2.4.0 - added `colour`")."""
    return _RECORD.match(text) is not None


def asks_history(q: Question) -> bool:
    """The question asks about the history of what it names: a version or date ("In which version …", "When
    …"), an event of change ("Was --fast removed?", "What changed …"), or a release it writes ("What did
    2.4.0 add?")."""
    if q.answer_type in ("version", "date"):
        return True
    text = q.focus or q.text
    return bool(_CHANGE_STEMS & set(q.terms)) or mentions_type(text, "version")


def other_events_versions(text: str, asked_event: str) -> str:
    """`text` without the versions it gives to an event other than `asked_event` (a past participle: "fixed"),
    so that "… [bug introduced in 1.9]" holds no version for "In which version was X fixed?"; `text` itself
    when it gives none, or when no event is asked."""
    if not asked_event:
        return text
    asked = stems([asked_event.lower()])[0]
    for pattern in (_EVENT_VERSION, _SINCE):
        text = pattern.sub(lambda m: m.group(0) if stems([_verb(m).lower()])[0] == asked else "", text)
    return text


def _verb(m: re.Match[str]) -> str:
    """The event a version is given to: the participle before it, or "since" (the state it began)."""
    return m.group(1) if m.lastindex and m.lastindex >= 2 else "since"
