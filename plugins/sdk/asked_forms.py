"""Question forms whose asked thing is named inside a phrase: "What is the purpose (role, function) of X?" asks
what X does (answer_types reads it as a definition); the answer must be about X."""

from __future__ import annotations

import re

from .answer_types import asked_clause
from .patterns import lazy_pattern

_FUNCTION_OF = lazy_pattern(
    r"^what(?:'s| is| are) the (?:purpose|function|role|job|point|use)s? of\s+([^?]+)", re.I
)


def function_of(question: str) -> str:
    """X of "What is the purpose (role, function) of X?", which the answer must be about; "" otherwise."""
    found = _FUNCTION_OF.match(asked_clause(question))
    return found.group(1).strip() if found else ""
