"""kb-balanced's diversity: maximal marginal relevance over the evidence that passed the relative cut.

Similarity of two candidates = the largest of their HDC claim similarity, their dense cosine (when every
candidate has a vector) and the Jaccard overlap of their own terms; statements about different terms or
subjects, or each naming a query term the other does not (the two sides of a comparison), count
TITLED_FACTOR of it and are never duplicates. A candidate at least DUPLICATE_SIM similar to one already
chosen is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from mrpvm.plugins.kb_common import Candidate, jaccard, own_terms

from .hdc import CLAIM_DIM, pairwise

MMR_LAMBDA = 0.6
MMR_POOL = 3  # MMR looks at the best MMR_POOL x budget candidates
DUPLICATE_SIM = 0.8
TITLED_FACTOR = 0.6  # the similarity of two units about different terms or subjects counts this much


def _about(unit) -> str | None:
    """What the unit states something about: its definition term, else its statement's subject."""
    return unit.title or unit.subject


def similarities(
    ranked: Sequence[Candidate], claims: np.ndarray, dense: Mapping[str, np.ndarray], query_terms: set[str]
) -> list[list[float]]:
    """The pairwise similarity matrix of the ranked candidates (module docstring), as rows of Python
    floats: the pair loop below and `select` read it element by element, which costs a numpy array a
    scalar box per read (the values are the float64 ones numpy computed)."""
    matrix = pairwise(claims, CLAIM_DIM)
    if all(c.id in dense for c in ranked):
        vectors = np.stack([dense[c.id] for c in ranked])
        matrix = np.maximum(matrix, vectors @ vectors.T)
    sims: list[list[float]] = matrix.astype(np.float64, copy=False).tolist()
    own = [own_terms(c.unit) for c in ranked]  # a shared heading is no sign of saying the same thing
    aspects = [o & query_terms for o in own]
    about = [_about(c.unit) for c in ranked]
    for i in range(len(ranked)):
        row, own_i, aspects_i, a = sims[i], own[i], aspects[i], about[i]
        for j in range(i + 1, len(ranked)):
            jac = jaccard(own_i, own[j])
            if jac > row[j]:
                row[j] = sims[j][i] = jac
            b = about[j]
            if (a and b and a != b) or (aspects_i - aspects[j] and aspects[j] - aspects_i):
                row[j] = sims[j][i] = min(row[j] * TITLED_FACTOR, DUPLICATE_SIM - 0.01)
    return sims


def select(ranked: Sequence[Candidate], sims: list[list[float]], budget: int) -> list[Candidate]:
    """Greedy MMR: relevance (score relative to the best) against the closest already-chosen candidate."""
    top = ranked[0].score or 1.0
    chosen: list[int] = []
    closest = [0.0] * len(ranked)  # each candidate's largest similarity to a chosen one
    left = list(range(len(ranked)))
    while left and len(chosen) < budget:
        best_i, best_v = -1, -math.inf
        for i in left:
            sim = closest[i]
            if sim >= DUPLICATE_SIM:
                continue
            value = MMR_LAMBDA * ranked[i].score / top - (1 - MMR_LAMBDA) * sim
            if value > best_v:
                best_i, best_v = i, value
        if best_i < 0:
            break
        chosen.append(best_i)
        left.remove(best_i)
        for i in left:
            sim = sims[i][best_i]
            if sim > closest[i]:
                closest[i] = sim
    return [ranked[i] for i in chosen]
