"""Soft term matching: a question word the passage states by a near-synonym counts as covered (issue 20).

The judge's coverage (passages.py) counts the idf-weighted share of the question's terms a passage states by
their stems; a question that paraphrases the answering sentence ("we need the output to stay *readable*" /
"To disable *minification* …", "fetch the *members*" / "View *accounts* in a list") falls under it though
the sentence answers. Soft term matching (as in soft cosine / translation-model retrieval) lets a question
term that the passage leaves out count when some word of the passage (or of the heading it stands under) is
its near-synonym by the embedding model already loaded (all-MiniLM-L6-v2; each word embedded alone). The
threshold is unsaid.SYNONYM, set on word pairs, not on any suite: a synonym ("remove" / "uninstall" 0.66)
counts, a relative ("install" / "uninstall" 0.57) does not.

What stays strict: a term of a name group (a product, an option), a number, an identifier or any key term
(the key test in `Judge.answers` is separate and unchanged); only plain lowercase words of the question's
own text are read, each matched at its full weight at most once (a passage word stands in for one question
word), and a passage word that states a question term itself stands in for no other. Only the gate is soft:
windows are still ranked by the stems they state, so a synonym opens the gate for a window the judge would
pick anyway, and `support.py` still decides `success` on the plain coverage.
"""

from __future__ import annotations

from collections.abc import Sequence

from mrpvm.plugins.sdk.embedding import dot, usable
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, terms

from .evidence import Scorer, Sentence
from .meaning import vectors
from .unsaid import SYNONYM

# a plain word (no digit, no symbol of a name, option or path), three letters or more
_WORD = lazy_pattern(r"(?<![\w./~$`-])[A-Za-z][a-z]{2,}(?![\w./`(-])")
MAX_WORDS = 200  # distinct passage words compared (a window is 1-3 sentences and its heading)


def words(text: str, lowercase: bool = False) -> list[str]:
    """The plain content words of a text, lowercased, in order, once each; `lowercase`: only those written
    in lowercase (a capitalised word of a question may be a name, which no synonym stands in for)."""
    found = (w for w in _WORD.findall(text) if not lowercase or w.islower())
    return list(dict.fromkeys(w.lower() for w in found if w.lower() not in STOPWORDS))


def soft_coverage(
    scorer: Scorer,
    question: str,
    have: set[str],
    window: Sequence[Sentence],
    keys: set[str],
) -> float:
    """`scorer.asked_coverage(have)` plus the weight of each asked one-stem term the passage leaves out but
    states by a near-synonym (MiniLM cosine of the two words >= SYNONYM); the plain coverage without the
    model. `keys`: the question's key terms, never matched softly."""
    plain = scorer.asked_coverage(have)
    if not usable():
        return plain
    by_stem: dict[str, str] = {}
    for w in words(question, lowercase=True):
        for t in terms(w):
            by_stem.setdefault(t, w)
    missing = [
        (by_stem[t], w)
        for parts, w in scorer.asked
        if len(parts) == 1 and not parts & have and (t := next(iter(parts))) in by_stem and t not in keys
    ]
    if not missing:
        return plain
    text = " ".join([*(s.text for s in window), window[0].unit.heading or "", window[0].unit.title or ""])
    said = [w for w in words(text) if not set(terms(w)) & set(by_stem)][:MAX_WORDS]
    if not said:
        return plain
    asked_vectors = vectors([w for w, _ in missing])
    said_vectors = vectors(said)
    gained = 0.0
    used: set[int] = set()
    for (_, weight), vector in zip(missing, asked_vectors, strict=True):
        best = max(
            ((dot(vector, v), i) for i, v in enumerate(said_vectors) if i not in used), default=(0.0, -1)
        )
        if best[0] >= SYNONYM:
            used.add(best[1])
            gained += weight
    return plain + gained / scorer.asked_total
