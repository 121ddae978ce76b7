"""Places in answers: "Where is X stored?" is answered by a path, a URL, a word naming a place or a locative
phrase ("in /var/cache", "on the build server"), not by a phrase saying where something comes from ("pull
requests from forks" names no place where X is). A phrase with "from" answers only a question that asks for an
origin ("Where does pip install packages from?")."""

from __future__ import annotations

import re

from .answer_shapes import mentions_type
from .patterns import lazy_pattern

# "where … from?": the question asks where something comes from (an origin, which "from X" states)
_ORIGIN_ASKED = lazy_pattern(r"\bwhere\b.*\bfrom\b", re.I | re.S)
_FROM = lazy_pattern(r"\bfrom\b", re.I)


def asks_origin(question: str) -> bool:
    """Whether a "where" question asks where something comes from ("Where does it download from?")."""
    return _ORIGIN_ASKED.search(question) is not None


def states_place(text: str, origin: bool) -> bool:
    """The text states a place; a "from" phrase counts only as an `origin` (a path or a place word after it
    still counts: "copied from /etc/skel")."""
    return mentions_type(text if origin else _FROM.sub(" ", text), "location")
