"""A name the question writes with a token no term stands for: the quote must write it to be `success`.

"What does a u suffix on the time mean?", "What does the '-' flag do?": the question picks the thing it asks
about by a lone lower-case letter or by one quoted character — tokens the shared analyser drops (a single
letter is no term, a symbol no word), so neither retrieval nor the judge can tell "the u suffix" from "the s
suffix", or "the '-' flag" from flags in general. A quoted sentence that never writes the token, under
headings that never write it either, speaks of a sibling ("The time can be suffixed with 's' …") or of the
kind as a whole ("Flags are ignored by verbs that do not expect them."): it is the best candidate, not a
supported answer, so the solver reports it as weak (never refuses it: the sentence may still be the one that
answers, written about the asked thing by a pronoun or a list).

A token counts when it stands alone: a lower-case letter other than the articles and pronoun ("a", "i")
between blanks, brackets or commas — not a file extension ("regexp.c"), a conversion ("%s"), an escape
("\\n"), a contraction ("don't") or an abbreviation ("e.g.") — or a single letter or symbol between quotation
marks or backticks ("'-'", "`+`", "'g'"). Upper-case letters are terms already ("plan B"), and longer quoted
names are identifiers (named.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.protocol.document import KnowledgeUnit

# a quoted single character, or a bare lower-case letter (not "a"/"i") standing as a word of its own
_UNSEEN = lazy_pattern(
    r"(?<![\w'’`.%\\/-])(?:['‘`\"“](?P<quoted>[^\w\s]|[A-Za-z])['’`\"”]|(?P<bare>[b-hj-z]))"
    r"(?![\w'’`-])(?!\.\w)"
)


def unseen_names(question: str) -> list[str]:
    """The tokens by which the question names what it asks about and that no term stands for."""
    return list(dict.fromkeys(m.group("quoted") or m.group("bare") for m in _UNSEEN.finditer(question)))


def _writes(token: str, text: str) -> bool:
    """The text writes the token as a token of its own (not inside a word: "s" in "suffix")."""
    return re.search(rf"(?<!\w){re.escape(token)}(?!\w)", text) is not None


def unwritten_name(question: str, answer: str, units: Iterable[KnowledgeUnit]) -> str:
    """The first name-token of the question that neither the answer nor any heading over its units writes
    (their term or title and their heading path), else ""."""
    headings = " ".join(filter(None, (part for u in units for part in (u.title, u.sectionTitle))))
    for token in unseen_names(question):
        if not _writes(token, answer) and not _writes(token, headings):
            return token
    return ""
