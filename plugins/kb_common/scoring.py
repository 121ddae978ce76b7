"""BM25 arithmetic shared by the in-memory and the persistent (tantivy) backends, so their scores compare.

Both use tantivy's BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), k1 = 1.2, b = 0.75, one set of
statistics per field, and a field's contribution multiplied by its DS009 weight.
"""

from __future__ import annotations

import math
from functools import lru_cache

from mrpvm.protocol.document import KnowledgeUnit

from .fields import FIELD_WEIGHTS, acts_terms, role_terms

K1 = 1.2
B = 0.75


def idf(doc_count: int, df: int) -> float:
    return math.log(1.0 + (doc_count - df + 0.5) / (df + 0.5))


@lru_cache(maxsize=64)
def _role_set(role: str) -> frozenset[str]:
    return frozenset(role_terms(role))


@lru_cache(maxsize=1024)
def _acts_set(acts: tuple[str, ...]) -> frozenset[str]:
    return frozenset(acts_terms(acts))


def tag_terms(unit: KnowledgeUnit) -> dict[str, frozenset[str]]:
    """The analysed role and acts of a unit (cached: both come from closed vocabularies)."""
    return tag_terms_for(unit.role, tuple(unit.acts))


def tag_terms_for(role: str, acts: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """`tag_terms` of a unit with this role and these acts."""
    return {"role": _role_set(role), "acts": _acts_set(acts)}


def tag_score(unit: KnowledgeUnit, weights: dict[str, float], tag_idf) -> float:
    """DS009 role (0.5) and utilityActs (0.8) field match of the query terms (term frequency 1)."""
    score = 0.0
    for field, found in tag_terms(unit).items():
        for term in found:
            w = weights.get(term)
            if w:
                score += FIELD_WEIGHTS[field] * w * tag_idf(field, term)
    return score


def tag_terms_of(role: str, acts_csv: str) -> dict[str, frozenset[str]]:
    """`tag_terms` from the stored role and comma-separated UtilityActs (acts derived from role when empty)."""
    from mrpvm.protocol.vocab import ACTS_FOR_ROLE

    acts = tuple(a for a in acts_csv.split(",") if a) or ACTS_FOR_ROLE.get(role, ())
    return {"role": _role_set(role), "acts": _acts_set(tuple(acts))}
