"""The answer of steps asked for ("How do I …, step by step?"): every step, with its command, of the
Procedure units that match the question best."""

from __future__ import annotations

from mrpvm.plugins.sdk.text import terms

from .context_terms import key_terms
from .evidence import procedure_steps
from .material import Material, Outcome
from .question import Question


def steps(q: Question, m: Material) -> Outcome | None:
    """The steps of the Procedure units that match the question best (every step, with its command)."""
    if not q.wants_steps:
        return None
    procs = [u for u in m.units if u.role == "Procedure" and procedure_steps(u)]
    if not procs:
        return None
    qset = set(q.terms)
    keys = key_terms(q.keyable, q.name_terms, m.pool)  # what makes the question specific ("SHA1", "-f")
    scored = []
    for u in procs:
        have = set(
            terms(" ".join([u.topic, u.title or "", u.sectionTitle or "", u.procedure or u.claim or ""]))
        )
        overlap = len(qset & have) / max(1, len(qset))
        if overlap >= 0.5 and keys <= have:
            scored.append((overlap, u))
    if not scored:
        return None
    best = max(sc for sc, _ in scored)
    chosen = [u for sc, u in scored if sc >= best * 0.9][:2]
    chosen.sort(
        key=lambda u: (u.charStart if u.charStart is not None else 0, u.chunkIndex or 0, u.unitIndex or 0)
    )
    parts: list[str] = []
    for u in chosen:
        steps = procedure_steps(u)
        lines = [f"{i}. " + st.replace("\n", "\n   ") for i, st in enumerate(steps, 1)]  # code under its step
        head = f"**{u.title or u.topic}**\n\n" if len(chosen) > 1 else ""
        parts.append(head + "\n".join(lines))
    conf = "high" if best >= 0.75 else "medium"
    return Outcome(
        "\n\n".join(parts),
        [u.id for u in chosen],
        conf,
        f"steps of {len(chosen)} procedure unit(s)",
        "procedure",
    )
