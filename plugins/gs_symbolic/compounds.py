"""Closed compounds: two words of the question that the documents write as one ("stop signal" and STOPSIGNAL,
"health check" and HEALTHCHECK, "tab size" and tabsize).

Term matching compares stems, and a closed compound stems as one token, so a passage under a heading that
writes the compound shares none of the question's two words. A compound is recognised when the stem of the
two adjacent question words joined is a term of the evidence (decompounding by the evidence's own vocabulary,
as IR systems for German or Dutch do by a lexicon); a passage that states it then states both words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mrpvm.plugins.sdk.text import stems, terms

_WORD = re.compile(r"[^\W\d_]{3,}")

Compound = tuple[frozenset[str], str]  # the two question stems, the stem of the word they make together


def closed_compounds(question: str, asked: Iterable[str], vocabulary: set[str]) -> list[Compound]:
    """Each pair of adjacent content words of the question whose joined form the evidence writes as a word
    of its own (and the question does not)."""
    asked = set(asked)
    words = _WORD.findall(question)
    found: list[Compound] = []
    for first, second in zip(words, words[1:], strict=False):
        parts = [terms(first), terms(second)]
        if any(len(p) != 1 or p[0] not in asked for p in parts):
            continue  # a stopword, or a word the question's terms do not keep
        joined = next(iter(stems([(first + second).lower()])), "")
        if joined and joined in vocabulary and joined not in asked:
            found.append((frozenset([parts[0][0], parts[1][0]]), joined))
    return found


def with_compounds(have: set[str] | frozenset[str], compounds: list[Compound]) -> set[str] | frozenset[str]:
    """`have` with the question's two words of each compound it holds joined."""
    for parts, joined in compounds:
        if joined in have:
            have = have | parts
    return have
