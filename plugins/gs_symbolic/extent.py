"""A span of time stated by its end or its extent, not by a measure (issue 20: false refusals).

"How long does a session key stay valid?" asks for a duration (answer type `duration`), and a duration has
two forms in English: a measure ("for 30 days", "two hours") and a bound — the event or state the span lasts
until ("until you sign out", "till the next restart"), the span it lasts for ("for the lifetime of the
process", "for the duration of the call", "for as long as the job runs") or no end at all ("indefinitely",
"permanently", "forever"). TimeML's TIMEX3 durations and its temporal signals (*until*, *for*, *during*)
draw the same line: a bounded interval is the value of a duration whose length is left to the event that
ends it. `sdk.answer_types.DURATION` reads the measure only, so a passage stating the bound was "untyped"
(halved in rank and, as the best passage, read as not saying what is asked: answer_form.unanswered).

`states_extent` reads both forms. A bound must open a clause or phrase ("until" then a word; "until now",
"until then", "until recently" point back at another time and state no end of the asked span). Generic
English only: no document's words.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import DURATION
from mrpvm.plugins.sdk.patterns import lazy_pattern

# a bound: "until"/"till" (and "up until") followed by the event or time that ends the span, not by a word
# that only points at another time
_UNTIL = lazy_pattern(
    r"\b(?:up\s+)?(?:until|till)\s+(?!(?:now|then|recently|today|later|further)\b)[\w“\"'`(]",
    re.I,
)
# the span named by what it lasts for: "for the lifetime of", "for the whole duration of", "during the
# entire length of", "for as long as"
_SPAN_OF = lazy_pattern(
    r"\b(?:for|during|throughout)\s+(?:the\s+)?(?:(?:whole|entire|full)\s+)?"
    r"(?:duration|lifetime|life|length|lifespan|rest|remainder)\s+of\b"
    r"|\bfor\s+as\s+long\s+as\b|\bas\s+long\s+as\s+(?:is\s+)?(?:needed|necessary|required)\b",
    re.I,
)
# no end: the span is unbounded
_UNBOUNDED = lazy_pattern(r"\b(?:indefinitely|permanently|forever|for\s+ever|in\s+perpetuity)\b", re.I)


def states_extent(text: str) -> bool:
    """The text states a span of time: a measure ("30 days") or a bound ("until you stop the server", "for
    the lifetime of the process", "indefinitely")."""
    return any(p.search(text) is not None for p in (DURATION, _UNTIL, _SPAN_OF, _UNBOUNDED))
