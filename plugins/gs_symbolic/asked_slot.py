"""Which of the windows sharing a question's words states what it asks: two readings for passages.Judge.

- The asked slot's noun: "What value does X return …?", "What number …": a noun that names nothing but the
  kind of answer (sdk TYPE_ONLY_NOUNS) is filled by the answer ("X returns -1"), seldom repeated by it; a
  sentence that repeats it ("If the return value is …") earns it as a heading's word does (CONTEXT_FACTOR),
  not as a word of the answer.
- A heading that lists several entries ("alpha_open, alpha_close, alpha_size"): its first sentence is about
  the asked entry only when it does not speak of the heading's other entries instead ("Note: alpha_open and
  alpha_close return 0 …" is about those two, not about alpha_size). An option's line ("-z, --squeeze")
  names one option twice: its names are no siblings.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import TYPE_ONLY_NOUNS, asked_noun
from mrpvm.plugins.sdk.text import stems, terms

# the separators of a heading that lists entries: "a, b, c", "a and b", "a / b"
_LISTED = re.compile(r",|\band\b|/")


def slot_stem(question: str) -> str:
    """The stem of the asked noun of a "which/what <noun> …" question when it names only the kind of
    answer ("What value does …" → valu); "" otherwise ("Which handler …" names what the answer is)."""
    noun = asked_noun(question) or ""
    return next(iter(stems([noun])), "") if noun in TYPE_ONLY_NOUNS else ""


def slot_as_context(own: set[str], ctx: set[str], slot: str) -> tuple[set[str], set[str]]:
    """(own, ctx) with the slot's stem counted as context: the window's saying it is no answer."""
    if not slot or slot not in own:
        return own, ctx
    return own - {slot}, ctx | {slot}


def names_sibling(title: str, said: set[str], asked: set[str]) -> bool:
    """The heading `title` lists several entries, the question (`asked`: its terms) names one of them, and
    the sentence (`said`: its terms) names another of them but not the asked one: it speaks of a sibling."""
    parts = [part.strip() for part in _LISTED.split(title) if part.strip()]
    if len(parts) < 2 or any(part.startswith("-") for part in parts):
        return False  # an option's line ("-z, --squeeze") lists the names of one option, not siblings
    entries = [e for e in (frozenset(terms(part)) for part in parts) if e]
    mine = [e for e in entries if e <= asked]
    others = [e for e in entries if not e <= asked]
    return bool(mine) and not any(e <= said for e in mine) and any(e <= said for e in others)
