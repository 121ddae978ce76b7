"""gs-symbolic's answer assembly: one path per kind of question, each purely extractive.

Order of decision for one question:
1. constrained output (Yes/No, one word): only an explicit statement answers (explicit.py), else no-context;
2. procedures, when steps are asked for and a Procedure unit matches;
3. comparisons, grouped by the compared entities;
4. proof chains (kb-thinkingdb notes, or triple-bearing units that link the question's entities);
5. an unconstrained yes/no question stated explicitly;
6. otherwise the relevant sentences, deduplicated, in reading order, as bullet points.
A question with no relevant sentence, or asking for an attribute the evidence never names, has no answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mrpvm.plugins.sdk.text import STOPWORDS, stems, terms
from mrpvm.protocol.document import KnowledgeUnit

from . import explicit
from .evidence import Scorer, Sentence, procedure_steps, relevant, split_units
from .narrowing import (
    best_alternatives,
    code_under_named_heading,
    drop_echoes,
    negation_terms,
    with_negations,
)
from .proofs import Chain, parse_notes, render_chain, statement, triple_chain
from .question import Question, content_terms, name_runs

MIN_SCORE = 0.2  # weighted share of the question's terms the best sentence must carry
DEFAULT_LIMIT = 8
BRIEF_LIMIT = 3
# "What is the <attribute> of X?" / "How many <things> ...?": the attribute's head noun must be named.
_ATTRIBUTE = re.compile(
    r"^\s*(?:what|which)\s+(?:is|are|was|were)\s+(?:the|a|an)\s+(?:[^\W_]+\s+){0,2}?([^\W_]+)\s+(?:of|for|in|at)\b"
    r"|^\s*how\s+(?:many|much)\s+([^\W_]+)",
    re.I,
)


@dataclass(slots=True)
class Outcome:
    markdown: str
    sources: list[str]
    confidence: str
    evidence: str = ""
    kind: str = "sentences"


@dataclass(slots=True)
class Material:
    """Everything the solver may use for one intent."""

    units: list[KnowledgeUnit]
    pool: list[Sentence]  # prose: sentences, list items, table rows
    chains: list[Chain] = field(default_factory=list)
    code: list[Sentence] = field(default_factory=list)  # code blocks and data lines

    @property
    def by_id(self) -> dict[str, KnowledgeUnit]:
        return {u.id: u for u in self.units}


def prepare(units: list[KnowledgeUnit], notes: str) -> Material:
    pieces = split_units(units)
    prose = [s for s in pieces if not s.code]
    code = [s for s in pieces if s.code]
    return Material(units, prose, parse_notes(notes) if notes else [], code)


def answer(q: Question, m: Material) -> Outcome | None:
    """The answer to one question, or None when the evidence does not answer it."""
    if not m.pool and not m.chains:
        return None
    if q.constrained:
        return _constrained(q, m)
    # an explicit request for steps or a comparison shapes the answer before any proof chain does
    for path in (_steps, _compare, _chain, _polar, _sentences):
        out = path(q, m)
        if out is not None:
            return out
    return None


# --------------------------------------------------------------------------- constrained formats


def _conclusions(m: Material) -> list[Sentence]:
    """Each proof's conclusion as a statement the Yes/No check may match (with the proof's units)."""
    out: list[Sentence] = []
    by_id = m.by_id
    for chain in m.chains:
        end = chain.conclusion
        if end is None or not chain.unit_ids:
            continue
        unit = by_id.get(chain.unit_ids[-1]) or (m.units[0] if m.units else None)
        if unit is None:
            continue
        text = statement(end)
        out.append(Sentence(text, unit, terms(text), (0, 0, 0), tuple(chain.unit_ids)))
    return out


def _constrained(q: Question, m: Material) -> Outcome | None:
    verdict = None
    if q.yes_no:
        verdict = explicit.yes_no(q, m.pool, _conclusions(m))
    elif q.single_word:
        verdict = explicit.which(q, m.pool)
    if verdict is None:
        return None
    ids = list(dict.fromkeys(uid for s in verdict.sentences for uid in s.unit_ids))
    text = verdict.answer if q.single_word else _verdict_text(verdict, m)
    how = "proved from stated facts" if verdict.derived else "stated explicitly"
    return Outcome(
        text, ids, "medium" if verdict.derived else "high", f"{how} in {', '.join(ids)}", "explicit"
    )


def _verdict_text(verdict: explicit.Verdict, m: Material) -> str:
    """'Yes.'/'No.' and the statement that says so; for a proved answer, the proof as a sentence chain."""
    if verdict.derived:
        by_id = m.by_id
        wanted = {s.text for s in verdict.sentences}
        for chain in m.chains:
            end = chain.conclusion
            if end is not None and statement(end) in wanted:
                return f"{verdict.answer}. " + render_chain(chain, by_id)[0]
    return f"{verdict.answer}. " + " ".join(_sentence(s.text) for s in verdict.sentences[:2])


# --------------------------------------------------------------------------- paths


def _chain(q: Question, m: Material) -> Outcome | None:
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
    # relevant statements the proofs do not cover
    scorer = _scorer(q, m.pool)
    in_chain = [s for s in m.pool if s.unit.id in ids]
    missing = set(q.terms) - {t for s in in_chain for t in s.terms}
    extra = [
        s
        for s in relevant([s for s in m.pool if s.unit.id not in ids], scorer, BRIEF_LIMIT)
        if missing & set(s.terms)
    ]
    body = "\n\n".join(paragraphs)
    if extra:
        body += "\n\nRelated evidence:\n" + "\n".join(f"- {_sentence(s.text)}" for s in extra)
        ids.extend(u for s in extra for u in s.unit_ids if u not in ids)
    return Outcome(body, ids, "high", f"{len(paragraphs)} proof chain(s) over {len(ids)} units", "proof")


def _polar(q: Question, m: Material) -> Outcome | None:
    """An unconstrained yes/no question: state the answer when explicit; otherwise fall through."""
    if not q.polar:
        return None
    verdict = explicit.yes_no(q, m.pool, _conclusions(m))
    if verdict is None:
        return None
    ids = list(dict.fromkeys(uid for s in verdict.sentences for uid in s.unit_ids))
    text = _verdict_text(verdict, m)
    return Outcome(text, ids, "medium" if verdict.derived else "high", "explicit statement", "explicit")


def _steps(q: Question, m: Material) -> Outcome | None:
    if not q.wants_steps:
        return None
    procs = [u for u in m.units if u.role == "Procedure" and procedure_steps(u)]
    if not procs:
        return None
    qset = set(q.terms)
    scored = []
    for u in procs:
        have = set(terms(" ".join([u.topic, u.title or "", u.procedure or u.claim or ""])))
        overlap = len(qset & have) / max(1, len(qset))
        if overlap > 0:
            scored.append((overlap, u))
    if not scored:
        return None
    best = max(s for s, _ in scored)
    chosen = [u for s, u in scored if s >= best * 0.6]
    chosen.sort(
        key=lambda u: (u.charStart if u.charStart is not None else 0, u.chunkIndex or 0, u.unitIndex or 0)
    )
    parts: list[str] = []
    seen: set[str] = set()
    for u in chosen:
        steps = [st for st in procedure_steps(u) if st.lower() not in seen]
        seen.update(st.lower() for st in steps)
        if not steps:
            continue
        lines = [f"{i}. {st}" for i, st in enumerate(steps, 1)]
        head = f"**{u.title or u.topic}**\n\n" if len(chosen) > 1 else ""
        parts.append(head + "\n".join(lines))
    ids = [u.id for u in chosen]
    scorer = _scorer(q, m.pool)
    notes = [s for s in relevant([s for s in m.pool if s.unit.role != "Procedure"], scorer, BRIEF_LIMIT, 0.6)]
    body = "\n\n".join(parts)
    if notes:
        body += "\n\nNotes:\n" + "\n".join(f"- {_sentence(s.text)}" for s in notes)
        ids.extend(s.unit.id for s in notes if s.unit.id not in ids)
    conf = "high" if best >= 0.5 else "medium"
    return Outcome(body, ids, conf, f"steps of {len(chosen)} procedure unit(s)", "procedure")


_SIDES = re.compile(
    r"\b(?:between|compare|comparing|contrast|contrasting)\s+(?P<a>.+?)\s+(?:and|with|versus|vs\.?|to)\s+(?P<b>.+?)(?:[?.,;:]|$)"
    r"|(?P<c>[^,.;:?]+?)\s+(?:versus|vs\.?)\s+(?P<d>[^,.;:?]+)",
    re.I,
)
_FRAME_STEMS = frozenset(
    stems(
        [
            "compare",
            "contrast",
            "explain",
            "describe",
            "how",
            "why",
            "what",
            "which",
            "who",
            "analyze",
            "analyse",
        ]
    )
)


def compared_sides(text: str, pool: list[Sentence]) -> list[str]:
    """The entities a comparison question names: proper names found in the evidence, else 'A and B' phrases."""
    vocab = {t for s in pool for t in s.terms}
    names: list[str] = []
    for phrase in name_runs(text):
        toks = [t for t in content_terms(phrase) if t not in _FRAME_STEMS]
        if toks and any(t in vocab for t in toks) and phrase not in names:
            names.append(phrase)
    if len(names) >= 2:
        return names[:4]
    m = _SIDES.search(text)
    if m:
        a, b = (m["a"], m["b"]) if m["a"] else (m["c"], m["d"])
        sides = [_strip_det(a), _strip_det(b)]
        if all(content_terms(s) for s in sides):
            return sides
    return names


def _strip_det(phrase: str) -> str:
    toks = phrase.strip().split()
    while toks and toks[0].lower() in ("the", "a", "an"):
        toks = toks[1:]
    return " ".join(toks)


def _compare(q: Question, m: Material) -> Outcome | None:
    if not q.compare:
        return None
    sides = compared_sides(q.text, m.pool)
    if len(sides) < 2 and q.context:
        sides = compared_sides(q.context.replace(";", ","), m.pool)
    if len(sides) < 2:
        return None
    side_terms = [set(content_terms(s)) for s in sides]
    shared = set.intersection(*side_terms)
    side_terms = [t - shared for t in side_terms]
    scorer = _scorer(q, m.pool)
    groups: dict[int, list[Sentence]] = {i: [] for i in range(len(sides))}
    both: list[Sentence] = []
    for s in m.pool:
        have = set(s.terms)
        hits = [i for i, ts in enumerate(side_terms) if ts & have]
        if len(hits) >= 2:
            both.append(s)
        elif hits:
            groups[hits[0]].append(s)
    limit = BRIEF_LIMIT if q.brief else 5
    if sum(1 for g in groups.values() if g) + (1 if both else 0) < 2 and not both:
        return None

    def top(items: list[Sentence]) -> list[Sentence]:
        ranked = sorted(items, key=lambda s: (-scorer.score(s), s.order))[:limit]
        return sorted(ranked, key=lambda s: s.order)

    blocks: list[str] = []
    ids: list[str] = []
    for i, side in enumerate(sides):
        chosen = top(groups[i])
        if chosen:
            blocks.append(f"**{side}**\n" + "\n".join(f"- {_sentence(s.text)}" for s in chosen))
        else:
            blocks.append(f"**{side}**\n- The evidence says nothing specific about {side}.")
        ids.extend(s.unit.id for s in chosen if s.unit.id not in ids)
    if both:
        chosen = top(both)
        blocks.append("**Both**\n" + "\n".join(f"- {_sentence(s.text)}" for s in chosen))
        ids.extend(s.unit.id for s in chosen if s.unit.id not in ids)
    covered = sum(1 for g in groups.values() if g)
    conf = "high" if covered == len(sides) else ("medium" if covered or both else "low")
    return Outcome("\n\n".join(blocks), ids, conf, f"comparison of {', '.join(sides)}", "comparison")


def _sentences(q: Question, m: Material) -> Outcome | None:
    if not q.terms and not q.support:
        return None
    head = _ATTRIBUTE.match(q.focus or q.text)
    if head:
        word = (head.group(1) or head.group(2) or "").lower()
        if word and word not in STOPWORDS:
            asked = stems([word])[0]
            if not any(asked in s.terms or asked in s.under for s in m.pool):
                return None  # the attribute asked for is never named in the evidence (nor in a heading)
    pool = m.pool + (m.code if q.wants_code else code_under_named_heading(m.code, q.terms))
    negated = negation_terms(q.focus or q.text)
    pool = with_negations(pool, negated)
    scorer = Scorer(pool, q.terms + negated, q.names, q.support)
    limit = BRIEF_LIMIT if q.brief else DEFAULT_LIMIT
    chosen = _same_codes(q, relevant(pool, scorer, limit))
    if not q.wants_list:
        chosen = best_alternatives(chosen, scorer)
    if not q.polar:
        chosen = drop_echoes(chosen, q.text)
    if not chosen or max(scorer.score(s) for s in chosen) < MIN_SCORE:
        return None
    coverage = scorer.coverage(chosen)
    conf = "high" if coverage >= 0.75 else ("medium" if coverage >= 0.4 else "low")
    body = _render(chosen, q.wants_list)
    if q.polar:
        body = "The evidence does not state a yes/no answer explicitly. Relevant statements:\n\n" + (
            body if body.startswith("- ") else f"- {body}"
        )
        conf = "low"
    ids = list(dict.fromkeys(s.unit.id for s in chosen))
    return Outcome(body, ids, conf, f"{len(chosen)} sentences, term coverage {coverage:.2f}", "sentences")


def _render(chosen: list[Sentence], as_list: bool) -> str:
    """One sentence as it is, several as a bulleted list; code as code: inline when one line, else a
    fenced block after the list."""
    lines = [
        f"`{s.text}`" if s.code and "\n" not in s.text else _sentence(s.text) for s in chosen if not _block(s)
    ]
    blocks = [f"```\n{s.text}\n```" for s in chosen if _block(s)]
    if len(lines) == 1 and not blocks and not as_list:
        return lines[0]
    parts = ["\n".join(f"- {line}" for line in lines)] if lines else []
    return "\n\n".join(parts + blocks)


def _block(s: Sentence) -> bool:
    return s.code and "\n" in s.text


def _codes(stems_: set[str] | list[str] | frozenset[str]) -> set[str]:
    """Model or code names ("e4", "x9", "k2"): letters and digits in one word."""
    return {t for t in stems_ if any(c.isdigit() for c in t) and any(c.isalpha() for c in t)}


def _same_codes(q: Question, chosen: list[Sentence]) -> list[Sentence]:
    """When the question names codes ("error E4", "the R5"), a sentence about other codes only ("Error E7
    means …", "Its firmware …" after a sentence about the X9) is about something else."""
    asked = _codes(q.terms) | _codes(q.support)
    if not asked:
        return chosen
    out = []
    for s in chosen:
        named = _codes(set(s.terms) | s.carried)
        if not named or named & asked:
            out.append(s)
    return out


def _scorer(q: Question, pool: list[Sentence]) -> Scorer:
    return Scorer(pool, q.terms, q.names, q.support)


def _sentence(text: str) -> str:
    """One line, ending as a sentence ends: a lead-in's colon or semicolon ("… as JSON:") becomes a period."""
    text = " ".join(text.split()).rstrip(":;, ")
    return text if not text or text[-1] in ".!?\"'”’)" else text + "."
