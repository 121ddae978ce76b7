"""gs-symbolic's answers in a constrained format: Yes/No (from an explicit statement, a proof, or the one
sentence that states the proposition or its negation) and a single word (from an explicit statement)."""

from __future__ import annotations

from mrpvm.plugins.sdk.text import terms

from . import explicit, meaning
from .ambiguity import excepted
from .context_terms import key_terms
from .evidence import Scorer, Sentence
from .material import Material, Outcome
from .polar_default import default_verdict
from .polar_meaning import closest_verdict
from .polar_necessity import necessity_verdict
from .polar_reader import read_verdict
from .polar_verb import referred
from .polarity import entry_verdict, term_weights
from .polarity import verdict as polar_verdict
from .proofs import render_chain, statement
from .question import Question, name_runs
from .render import definition_label, join_quotes, labelled


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


def single_word(q: Question, m: Material) -> Outcome | None:
    verdict = explicit.which(q, m.pool)
    if verdict is None:
        return None
    ids = list(dict.fromkeys(uid for s in verdict.sentences for uid in s.unit_ids))
    return Outcome(verdict.answer, ids, "high", f"stated explicitly in {', '.join(ids)}", "explicit")


def yes_no(q: Question, m: Material) -> Outcome | None:
    """Yes/No from an explicit statement of the proposition (or a proof of it), else from the sentence
    that states the proposition or its negation; else no answer."""
    if q.polar or q.yes_no:
        found = explicit.yes_no(q, m.pool, _conclusions(m))
        if found is not None:
            ids = list(dict.fromkeys(uid for s in found.sentences for uid in s.unit_ids))
            text = found.answer if q.single_word else _verdict_text(found, m)
            how = "proved from stated facts" if found.derived else "stated explicitly"
            conf = "medium" if found.derived else "high"
            return Outcome(text, ids, conf, f"{how} in {', '.join(ids)}", "explicit")
    if q.polar and q.hypothetical:  # "Can I X if I don't Y?" over "… must Y": No, by the necessity
        return necessity_verdict(q, m.pool, term_weights(_scorer(q, m.pool)))
    if not q.polar:
        return None
    scorer = _scorer(q, m.pool)
    keys = key_terms(q.keyable, q.name_terms, m.pool)
    named = name_runs(q.context.replace(";", ","))
    weights = term_weights(scorer)
    stated = entry_verdict(q.focus or q.text, m.pool, weights, keys) or polar_verdict(
        q.focus or q.text,
        m.pool,
        weights,
        keys,
        q.name_terms,
        named[0] if named else "",
        frozenset(scorer.unknown),
    )
    supported = stated is None or stated.verb_stated  # a sentence without the asked verb: weak
    by_meaning = stated is None
    if stated is None:
        close = meaning.for_question(q.text, m.pool, scorer.score)
        by_default = default_verdict(q.focus or q.text, m.pool, close, weights, keys)
        if by_default is not None:
            stated, supported = by_default  # an entry's stated default value supports the answer
            by_meaning = not supported
        else:
            stated = (
                closest_verdict(q.focus or q.text, m.pool, close, keys, weights)
                if close is not None
                else None
            )
            if stated is None and close is not None:  # stated in other words, maybe under a condition
                stated = read_verdict(q.focus or q.text, m.pool, close, keys, weights)
            if stated is None:
                return None
            supported = False  # read from the sentence closest in meaning: weak evidence
    exception = excepted(stated.sentence, m.pool, set(weights)) if supported else ""
    supported = supported and not exception  # the next sentence takes the asked case out of the rule
    if q.single_word:
        word = stated.answer.split(",")[0]  # "No, if …": the word without its condition
        return Outcome(word, [stated.sentence.unit.id], "medium", "stated", "explicit", supported)
    quote = join_quotes(referred(stated.sentence, m.pool))
    label = definition_label(stated.sentence.unit)
    text = f"{stated.answer}. " + (labelled(label, quote) if label else quote)
    if exception:
        evidence = (
            f"the proposition stated in {stated.sentence.unit.id}; an exception follows: {exception[:80]}"
        )
    elif supported:
        evidence = f"the proposition stated ({stated.stated:.2f} of its terms) in {stated.sentence.unit.id}"
    elif not by_meaning:
        evidence = (
            f"the proposition's terms ({stated.stated:.2f}) without its verb in {stated.sentence.unit.id}"
        )
    else:
        evidence = f"the closest sentence in meaning ({stated.stated:.2f}) in {stated.sentence.unit.id}"
    return Outcome(
        text, [stated.sentence.unit.id], "medium" if supported else "low", evidence, "explicit", supported
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
    return f"{verdict.answer}. " + " ".join(join_quotes([s]) for s in verdict.sentences[:2])


def _scorer(q: Question, pool: list[Sentence]) -> Scorer:
    return Scorer(pool, q.terms, q.names, q.support, q.collection, question=q.text)
