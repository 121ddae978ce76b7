"""A synthetic KB for the retrieval benchmark: N atomic units over a generated pseudo-word vocabulary.

Zipf–Mandelbrot term frequencies p(r) ~ 1/(r + 10)^1.05 (a content-word distribution after stopword
removal); topics of 2–4 words, claims of 10–20 words with some function words the analyser must drop;
questions made of three words of a random target unit.
"""

from __future__ import annotations

import msgspec
import numpy as np

ROLES = (
    "Description",
    "Explanation",
    "Definition",
    "Procedure",
    "Narrative",
    "Evaluation",
    "Comparison",
    "Constraint",
    "Diagnostic",
)
ACT_FOR_ROLE = {
    "Description": "describe",
    "Explanation": "explain",
    "Definition": "define",
    "Procedure": "implement",
    "Narrative": "identify",
    "Evaluation": "evaluate",
    "Comparison": "compare",
    "Constraint": "verify",
    "Diagnostic": "diagnose",
}
GLUE = ("the", "of", "and", "is", "in", "to", "with", "for", "a", "on")
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["ar", "en", "il", "on", "ut", "ex", "or"]


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    words: set[str] = set()
    out: list[str] = []
    while len(out) < size:
        n = int(rng.integers(2, 5))
        w = "".join(SYLLABLES[int(i)] for i in rng.integers(0, len(SYLLABLES), n))
        if w not in words:
            words.add(w)
            out.append(w)
    return out


class Corpus:
    """Topic and claim word lists of N units, and the analysed terms rank-bm25 indexes."""

    def __init__(self, n: int, seed: int = 7):
        rng = np.random.default_rng(seed)
        v = int(min(200_000, max(5_000, n // 5)))
        self.vocab = vocabulary(v, rng)
        p = 1.0 / (np.arange(1, v + 1) + 10.0) ** 1.05
        p /= p.sum()
        self.n = n
        tlen = rng.integers(2, 5, n)
        clen = rng.integers(10, 21, n)
        total = int(tlen.sum() + clen.sum())
        draws = rng.choice(v, size=total, p=p)
        self.topic: list[np.ndarray] = []
        self.claim: list[np.ndarray] = []
        pos = 0
        for i in range(n):
            self.topic.append(draws[pos : pos + tlen[i]])
            pos += tlen[i]
            self.claim.append(draws[pos : pos + clen[i]])
            pos += clen[i]
        self.roles = rng.integers(0, len(ROLES), n)
        self.glue = rng.integers(0, len(GLUE), (n, 4))

    def unit(self, i: int, source: str) -> dict:
        vocab = self.vocab
        claim_words = [vocab[j] for j in self.claim[i]]
        for k, g in enumerate(self.glue[i]):  # function words the analyser must drop
            claim_words.insert(min(len(claim_words), 2 + 3 * k), GLUE[g])
        role = ROLES[self.roles[i]]
        text = " ".join(claim_words).capitalize() + "."
        body = {"procedure": f"1. {text}"} if role == "Procedure" else {"claim": text}
        return {
            "id": f"{source}::chunk-{i % 1000:03d}::unit-{i:07d}",
            "sourceId": source,
            "chunkId": f"{source}::chunk-{i % 1000:03d}",
            "kuType": "atomic",
            "role": role,
            "topic": " ".join(vocab[j] for j in self.topic[i]),
            **body,
        }

    def questions(self, count: int, seed: int = 11) -> list[tuple[int, str, str]]:
        """(target index, act, question text): 3 words of the target, its rarer ones first."""
        rng = np.random.default_rng(seed)
        out = []
        for t in rng.integers(0, self.n, count):
            words = np.unique(np.concatenate([self.topic[t], self.claim[t]]))
            picked = rng.choice(np.sort(words)[::-1][: max(3, len(words) // 2)], size=3, replace=False)
            text = "What about " + " ".join(self.vocab[j] for j in picked) + "?"
            out.append((int(t), ACT_FOR_ROLE[ROLES[self.roles[t]]], text))
        return out

    def analysed(self) -> list[list[str]]:
        from mrpvm.plugins.kb_common import unit_fields
        from mrpvm.protocol.document import KnowledgeUnit

        dec = msgspec.convert
        out = []
        for i in range(self.n):
            f = unit_fields(dec(self.unit(i, "s"), KnowledgeUnit))
            out.append(f["topic"] + f["body"])
        return out
