"""An ordinal that places something in a sequence names no thing (issue 20: false refusals).

"What does clamp() return when the third argument is omitted?" over "clamp(X, LO, HI) … If HI is omitted,
…": the documents name the argument by its letter or its name, never by its place, so "third" is a word the
collection never holds, and unsaid.unsaid_word read it as the thing the question turns on, which the
documents would never name — refusing the passage that answers. An ordinal after a determiner and before a
word ("the second argument", "its third field") is a positional reference (a deictic of order, resolved
against the sequence the passage writes), not a name of anything: it is no evidence that the documents do
not cover what is asked. An ordinal that is not so placed ("When was it first released?", "the 30 second
timeout", "a second") is left to be read as before.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

_ORDINAL = lazy_pattern(
    r"\b(?:the|its|their|his|her|your|my|our|this|that)\s+"
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final|penultimate)"
    r"\s+(?=[A-Za-z(`'\"])",
    re.I,
)


def positional_ordinals(question: str) -> frozenset[str]:
    """The ordinals of `question` that place something in a sequence ("the second argument" → {"second"})."""
    return frozenset(m.group(1).lower() for m in _ORDINAL.finditer(question))
