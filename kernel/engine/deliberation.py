"""Comparative deliberation (docs/ARCHITECTURE.md §4, step 6a): more than one answer per seed, the best kept.

At `deliberation_level` 0 (the default) a seed returns its first answer that survives validation. At
level N (1–3) the seed keeps exploring after that answer, in the loop's own backtracking order — the
remaining gs candidates on the same knowledge view, then the next knowledge views (the remaining kb
candidates) with every gs candidate on each — until it holds N more accepted answers, runs out of
candidates, or the request's budget (LLM calls, deadline) is spent; a view that selects the same
evidence as one already explored is skipped, a rejected answer never competes, and no exploration opens
a child frame. Then every candidate is scored and the best returned.

**Scoring rule** (higher wins; every term in [0, 1]):

    score = 2·verdict + coverage + support + 0.25·confidence + 0.25·sufficient

- `verdict`: the validation verdict, accepted 1.0, unvalidated 0.5 (rejected answers are not candidates).
- `coverage`: the share of the intent's content words found in the evidence the answer cites (its
  sources; all of its view's evidence when it cites none): does the evidence address the question?
- `support`: the share of the answer's content words found in that same evidence: is the answer
  grounded in its sources rather than in words the evidence does not hold?
- `confidence`: the solver's confidence (high 1, medium 2/3, low 1/3; numbers as given); `sufficient`:
  the kb-plugin judged the view sufficient (1) or not (0).

Content words are lower-cased word forms of 3+ letters, minus a short function-word list, folded by a
small suffix rule (plural, -ing, -ed). This is the one place the kernel compares text: it counts shared
word forms and never interprets what a claim means. The first answer (the one level 0 returns) wins
unless another scores at least `MARGIN` more, so deliberation changes an answer only on clear evidence.

Trace: every candidate is a `candidate` node under the seed (its plugins, score and terms) linked to the
solve that produced it (`produces`); the seed `chooses` the winner, and the edge carries the reason.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.protocol.document import KnowledgeUnit

from .response import SeedOutcome
from .state import TurnState
from .views import View, confidence_rank

MARGIN = 0.1
VERDICT = {"accepted": 1.0, "unvalidated": 0.5, "none": 0.5}
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_FUNCTION_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "are",
        "was",
        "were",
        "with",
        "that",
        "this",
        "these",
        "those",
        "from",
        "into",
        "onto",
        "than",
        "then",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "does",
        "did",
        "has",
        "have",
        "had",
        "not",
        "but",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "its",
        "their",
        "there",
        "here",
        "about",
        "over",
        "under",
        "also",
        "only",
        "just",
        "very",
        "more",
        "most",
        "some",
        "any",
        "all",
        "each",
        "other",
        "such",
        "been",
        "being",
        "our",
        "your",
        "you",
        "they",
        "them",
        "his",
        "her",
        "she",
        "him",
        "itself",
        "per",
        "via",
        "yes",
    ]
)


def content_words(text: str) -> set[str]:
    """The folded content words of a text (see the module docstring)."""
    out = set()
    for word in _WORD.findall(text.lower()):
        if word in _FUNCTION_WORDS:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


def _unit_text(unit: KnowledgeUnit) -> str:
    return " ".join(p for p in (unit.title or "", unit.heading, unit.topic, unit.body) if p)


def _share(wanted: set[str], have: set[str]) -> float:
    return len(wanted & have) / len(wanted) if wanted else 1.0


class Candidate(msgspec.Struct):
    """One accepted answer of a seed with the view it came from, and its score once scored."""

    outcome: SeedOutcome
    view: View
    score: float = 0.0
    terms: dict[str, float] | None = None
    node_id: str = ""


def score(candidate: Candidate) -> float:
    """The scoring rule of the module docstring; fills `candidate.terms` and `candidate.score`."""
    outcome, view = candidate.outcome, candidate.view
    by_id = {u.id: u for u in (*outcome.evidence, *view.evidence)}
    cited = [by_id[i] for i in outcome.sources if i in by_id] or list(view.evidence)
    evidence = content_words(" ".join(_unit_text(u) for u in cited))
    terms = {
        "verdict": VERDICT.get(outcome.validation, 0.5),
        "coverage": _share(content_words(outcome.intent.intent), evidence),
        "support": _share(content_words(outcome.answer), evidence) if evidence else 0.0,
        "confidence": min(1.0, confidence_rank(outcome.confidence) / 3.0),
        "sufficient": 1.0 if view.sufficient else 0.0,
    }
    candidate.terms = {k: round(v, 3) for k, v in terms.items()}
    candidate.score = round(
        2 * terms["verdict"]
        + terms["coverage"]
        + terms["support"]
        + 0.25 * terms["confidence"]
        + 0.25 * terms["sufficient"],
        4,
    )
    return candidate.score


def choose(state: TurnState, seed_node: str, frame_id: str, pool: list[Candidate]) -> SeedOutcome:
    """Score every candidate, record each as a trace node and the choice as a `chooses` edge; the best
    outcome (the first unless another beats it by MARGIN)."""
    trace = state.trace
    for number, candidate in enumerate(pool, 1):
        score(candidate)
        outcome = candidate.outcome
        node = trace.node(
            "candidate",
            f"candidate {number}: {outcome.kb_plugin or 'no kb'} → {outcome.gs_plugin} (score {candidate.score})",
            parent=seed_node,
            frameId=frame_id,
            status=outcome.validation,
            output={
                "score": candidate.score,
                "terms": candidate.terms,
                "kbPlugin": outcome.kb_plugin,
                "gsPlugin": outcome.gs_plugin,
                "sources": outcome.sources[:24],
                "answer": outcome.answer[:240],
            },
        )
        candidate.node_id = node.id
        trace.edge(outcome.node_id, node.id, "produces")
    first = pool[0]
    best = max(pool, key=lambda c: c.score)
    if best is not first and best.score < first.score + MARGIN:
        best = first
    if len(pool) == 1:
        reason = "the only accepted answer found within the budget"
    elif best is first:
        reason = f"the first answer kept: no other candidate scored {MARGIN} more (best {max(c.score for c in pool[1:])})"
    else:
        reason = f"highest score {best.score} against {first.score} for the first answer"
    terms = ", ".join(f"{k} {v}" for k, v in (best.terms or {}).items())
    trace.edge(seed_node, best.node_id, "chooses", f"{reason} ({terms})")
    chosen = best.outcome
    chosen.warnings = [w for w in chosen.warnings if not w.startswith("weak recovery")]
    return chosen
