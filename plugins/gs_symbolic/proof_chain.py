"""The answer of a proof chain: an open question ("explain why …") answered by kb-thinkingdb's proof notes,
or by a chain of triple-bearing units that links the question's entities (proofs.py reads and renders
them)."""

from __future__ import annotations

from .material import Material, Outcome
from .proofs import render_chain, triple_chain
from .question import Question


def proof_chain(q: Question, m: Material) -> Outcome | None:
    """kb-thinkingdb's proof chains for the question, else one linking its entities over the units' triples,
    rendered as the units' claims in proof order; None when there is none."""
    chains = list(m.chains)
    if not chains:
        found = triple_chain(m.units, q.text)
        chains = [found] if found else []
    if not chains:
        return None
    by_id = m.by_id
    paragraphs: list[str] = []
    ids: list[str] = []
    for n, chain in enumerate(chains):
        text, used = render_chain(chain, by_id)
        if not text:
            continue
        paragraphs.append(text if n == 0 else f"Also: {text}")
        ids.extend(u for u in used if u not in ids)
    if not paragraphs:
        return None
    return Outcome(
        "\n\n".join(paragraphs),
        ids,
        "high",
        f"{len(paragraphs)} proof chain(s) over {len(ids)} units",
        "proof",
    )
