"""gs-symbolic's answer assembly: one path per kind of question, each purely extractive.

Order of decision for one question:
1. a yes/no question (constrained or not): an explicit statement of the proposition (explicit.py), else
   the one sentence that states it or its negation (polarity.py); otherwise no answer;
2. a single-word answer: only from an explicit statement (explicit.py);
3. procedures, when steps are asked for and a Procedure unit matches (steps.py);
4. comparisons: the best passage about each compared side;
5. proof chains (kb-thinkingdb notes, or triple-bearing units that link the question's entities), for open
   questions ("explain why …") (proof_chain.py);
6. otherwise the passage (1-3 consecutive sentences of one unit) that answers (passages.py), with the label
   it needs (a definition's term); lists when a list is asked for.
No passage answers, or the attribute asked for is never named: no answer (the kernel's no-context).
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.agent_answers import agent_action, asks_permission
from mrpvm.plugins.sdk.answer_types import (
    FUNCTION_NOUNS,
    TYPE_ONLY_NOUNS,
    asked_clause,
    asks_literal,
    find_type,
    quotes_literal,
)
from mrpvm.plugins.sdk.asked_forms import function_of
from mrpvm.plugins.sdk.lexicon import EVALUATION_NOUNS
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.place_answers import asks_origin
from mrpvm.plugins.sdk.text import STOPWORDS, stems, terms

from . import meaning
from .action import asked_action, done_elsewhere
from .agreement import Leads
from .ambiguity import typed_rival
from .answer_form import announces_command, asks_default, defaults_elsewhere, marked, unanswered, unstated
from .asked_kind import asked_attribute, asked_kind, kind_stated
from .circumstance import unspoken
from .clauses import tokenize
from .code_fields import code_field
from .code_prose import prose_of_code
from .compare import compare
from .constrained import single_word, yes_no
from .context_terms import common_terms, key_terms, titled_sources
from .definiendum import asked_definiendum, asked_subject, unnamed
from .directives import absence_condition, condition_of, trailing_condition
from .document_header import about_other_thing
from .documented import classified_entries, documented_keys, entry_terms_written
from .evidence import LISTS, Scorer, Sentence, relevant
from .focus import foreign_focus, instrument, unheld_option
from .form_rank import form_first
from .history import asked_event, asks_history, change_record
from .material import Material, Outcome
from .named import about_named, unwritten
from .narrowing import (
    code_under_named_heading,
    drop_echoes,
    echoes,
    literals,
    negation_terms,
    said,
    with_negations,
)
from .neighbour_entry import unheld_entry
from .passages import Judge, Passage
from .proof_chain import proof_chain
from .qualifiers import asks_past
from .question import Question
from .record_fields import field_answer, field_unstated, fields_only
from .referral import refers_only
from .render import MAX_LABEL, labelled, passage_text, render_list
from .shapes import asked_program
from .spans import (
    completed,
    condensed,
    named_antecedent,
    shortest_answering,
    with_command,
    with_lead,
    with_led_code,
    with_reason,
    with_steps,
)
from .steps import steps
from .support import leads_nowhere, supports
from .unit_detail import with_led_row, with_means, written_beyond
from .unsaid import unsaid_thing, unsaid_word
from .unseen_name import unwritten_name
from .window_reading import FUTURE

MIN_SCORE = 0.2  # weighted share of the question's terms the best sentence must carry
OPEN_PASSAGES = 3  # an open question ("describe X") may be answered by this many passages
OPEN_SHARE = 0.5  # ... each scoring at least this share of the best one
OPEN_TERMS = 6  # an untyped request with more content words than this asks for a synthesis
DEFAULT_LIMIT = 8
BRIEF_LIMIT = 3
UNTYPED = "0.2"  # the confidence of an answer lacking what the question's form asks (below "low", 1/3)
# "What is the <attribute> of X?" / "How many <things> ...?": the attribute's head noun must be named.
# "When does X exit?", "When is X used?": an interrogative "when" (before an auxiliary) asks the circumstance,
# it sets no condition
_CONDITIONED = lazy_pattern(
    r"\s*(?:what\s+happens\s+)?(?:if|unless|when(?!\s+(?:does|do|did|is|are|was|were|will|would|can|could|"
    r"should|must|may|might|has|have|had)\b))\b",
    re.I,
)


def _without_echoes(q: Question, m: Material) -> Material:
    """The evidence without the question's own sentences (a premise the turn stated is staged as a unit of
    the turn: it is what the user said, not an answer to it)."""
    asked = " ".join(q.text.lower().split())
    keep = [
        s
        for s in m.pool
        if s.unit.sourceType != "turn" or " ".join(s.text.lower().split()).rstrip(".!?") not in asked
    ]
    return m if len(keep) == len(m.pool) else Material(m.units, keep, m.chains, m.code)


def answer(q: Question, m: Material) -> Outcome | None:
    """The answer to one question, or None when the evidence does not answer it."""
    m = _without_echoes(q, m)
    if not m.pool and not m.chains:
        return None if q.yes_no or q.polar else code_field(q, m.code, m.pool)  # a quoted record alone
    if q.yes_no or q.polar:
        return yes_no(q, m)
    if q.single_word:
        return single_word(q, m)
    if unheld_option(q.text, [*m.pool, *m.code]) or unwritten(q.focus or q.text, [*m.pool, *m.code]):
        return None  # asked about an option or identifier the evidence never writes: the documents do not cover it
    q.foreign = foreign_focus(q.focus or q.text, q.collection, m.pool)
    q.documented = documented_keys(q.focus or q.text, m.pool)
    if q.foreign and q.foreign == instrument(q.focus or q.text):
        return None  # "… with conda": a tool the documents never name, nor anything like it; they do not say
    if (action := asked_action(q.focus or q.text)) is not None and done_elsewhere(action, m.pool):
        return None  # the documents do the asked action only to other things they name with the asked one
    if (field := field_answer(q, m.pool)) is not None:
        return field  # a field of the record the question names ("the default of timeout": `default: 300`)
    if field_unstated(q, m.pool):
        return None  # the record the question names lists its fields, and not the asked one
    if (named := about_named(q.focus or q.text, m.pool, m.code)) is not None:
        # an identifier the question writes: only the evidence about the thing it names may answer
        m = Material(m.units, named[0], m.chains, named[1])
    # no passage answers: an indented paragraph read as prose (code_prose.py) or a labelled line of a quoted
    # record the question names (code_fields.py) may
    out = _open_answer(q, m) or _from_prose_code(q, m) or code_field(q, m.code, m.pool)
    if out is not None and out.kind == "sentences" and (lack := unstated(q, out.markdown)):
        if unanswered(q, lack):
            # the best passage (answer-type re-ranking has looked for one that states it) names no default,
            # figure, version, date or file where the question asks for one, nor does an indented paragraph
            # read as prose (code_prose.py): the evidence does not say it
            if (out := _from_prose_code(q, m)) is None:
                return None
        else:
            # the passage repeats the question without stating what it asks for: weak, and below a weak
            # answer that states it (the kernel keeps the best of the weak answers its views gave)
            out.supported = False
            out.confidence = UNTYPED
            out.evidence += f"; {lack}"
    if (
        out is not None
        and out.supported
        and (never := unnamed(asked_subject(q.focus or q.text), q.collection))
    ):
        out.supported = False  # "What does X do?" over documents that never name X
        out.confidence = "low"
        out.evidence += f"; the documents never name '{never}'"
    if out is not None and not q.foreign and marked(q) and unsaid_thing(q, out.markdown):
        # "Which release added multithreaded compression?" over notes that never use the word: the release,
        # figure or date the passage gives is that of something else; the documents do not say the asked one
        return None
    if out is not None and out.supported and not q.foreign and (absent := unsaid_word(q, out.markdown)):
        out.supported = False  # a word the question turns on that the documents never use: weak at most
        out.confidence = "low"
        out.evidence += f"; the documents never use '{absent}'"
    if out is not None and out.supported and (token := _unwritten_name(q, m, out)):
        out.supported = False  # "the u suffix" answered by a sentence on the 's' suffix: a sibling at best
        out.confidence = "low"
        out.evidence += f"; the asked '{token}' is not written"
    if out is not None and q.foreign:
        out.supported = False  # what the question turns on is a word the documents never use: weak at most
        out.evidence += f"; the documents never name '{q.foreign}'"
    return out


def _unwritten_name(q: Question, m: Material, out: Outcome) -> str:
    """A one-character name the question asks about (unseen_name.py) that the answer and its headings never write."""
    by_id = m.by_id
    return unwritten_name(q.focus or q.text, out.markdown, [by_id[i] for i in out.sources if i in by_id])


def _from_prose_code(q: Question, m: Material) -> Outcome | None:
    """The answer from the prose and the indented paragraphs read as prose, when it states what is asked."""
    prose = prose_of_code(m.code)
    out = _open_answer(q, Material(m.units, m.pool + prose, m.chains, m.code)) if prose else None
    return out if out is not None and out.kind == "sentences" and not unstated(q, out.markdown) else None


def _open_answer(q: Question, m: Material) -> Outcome | None:
    """An answer that is not Yes/No or a single word: steps, a comparison, a proof chain or a passage."""
    # an explicit request for steps or a comparison shapes the answer before any proof chain does;
    # a proof chain answers open questions ("explain why …"), a passage answers typed ones
    open_question = q.answer_type in ("", "reason", "definition")
    paths = (
        (steps, compare, proof_chain, _sentences)
        if open_question
        else (steps, compare, _sentences, proof_chain)
    )
    for path in paths:
        out = path(q, m)
        if out is not None:
            return out
    return None


# --------------------------------------------------------------------------- paths


def _sentences(q: Question, m: Material) -> Outcome | None:
    if not q.terms and not q.support:
        return None
    word = asked_attribute(q.focus or q.text)
    if word and word not in STOPWORDS and word not in TYPE_ONLY_NOUNS | FUNCTION_NOUNS | EVALUATION_NOUNS:
        asked = stems([word])[0]
        if not any(asked in s.terms or asked in s.under for s in m.pool):
            return None  # the attribute asked for is never named in the evidence (nor in a heading)
    with_code = q.wants_code or q.wants_steps
    pool = m.pool + (m.code if with_code else code_under_named_heading(m.code, q.terms))
    negated = negation_terms(q.focus or q.text)
    pool = classified_entries(q.focus or q.text, with_negations(pool, negated))
    # "which database does it store pages in": when the kind asked for and another of the question's words
    # are both foreign to the documents, the question is about something they do not cover, and the kind
    # counts in full ("what colour is the pump", answered by "painted blue", keeps the usual discount)
    unknown = {t for t in q.terms if q.collection.get(t) == 0}
    essential = (
        frozenset([q.kind])
        if q.answer_type == "entity" and q.kind in unknown and len(unknown) >= 2
        else frozenset()
    )
    scorer = Scorer(pool, q.terms + negated, q.names, q.support, q.collection, essential, q.text)
    # a list or table whose heading names all the question asks is the answer whole ("What are the exit
    # codes?"); prose under such a heading (an FAQ entry, a man page's option) is read sentence by sentence
    if any(s.under and s.unit.chunkType in LISTS and scorer.headed(s) for s in pool):
        return _listed(q, pool, scorer)
    # a list asked of prose ("which options are not allowed with -q?"): the sentence that enumerates them
    # answers, not every sentence sharing a word; items of a list or table are listed
    prose_list = q.wants_list and not _itemized(pool, scorer, q)
    if q.wants_list and not prose_list:
        return _listed(q, pool, scorer)
    if q.answer_type == "" and len(q.terms) > OPEN_TERMS:
        # "Explain the chain of events that …", "Analyze why …": a synthesis of what the evidence says
        return _listed(q, pool, scorer, as_list=False)
    future = bool(FUTURE.search(q.focus or q.text))
    focus = q.focus or q.text
    leading = _CONDITIONED.match(focus) is not None
    condition = condition_of(focus) if leading else trailing_condition(focus)
    keys = key_terms(q.keyable, q.name_terms, pool)
    keys |= set(terms(function_of(q.focus or q.text)))  # "the purpose of X": a passage about X
    # an entry of the evidence the question names ("the backoff option"): what it asks about
    entries = entry_terms_written(q.focus or q.text, pool)
    judge = Judge(
        scorer,
        q.answer_type,
        keys,
        future,
        condition,
        q.year,
        q.options,
        meaning.for_question(q.text, pool, scorer.score),
        q.name_terms | entries,
        next(iter(stems([q.foreign])), "") if q.foreign else "",
        # "What does the region option do?": the entry it names is what it asks defined, however many
        # units write the word
        common_terms(q.terms, pool) - (entries if q.answer_type == "definition" else set()),
        titled_sources(pool),
        untimed=q.untimed,
        circumstance=q.circumstance and not future,
        frequency=q.frequency,
        action=asked_action(q.focus or q.text),
        made=asked_action(q.focus or q.text, light=True),
        defined=asked_definiendum(q.focus or q.text),
        permission=q.answer_type == "person" and asks_permission(q.focus or q.text),
        agent=agent_action(q.focus or q.text),
        origin=asks_origin(q.focus or q.text),
        written=literals(q.focus or q.text),
        documented=q.documented,
        strict_if=not leading,
        program=asked_program(q.focus or q.text) if q.answer_type == "command" else "",
        event=asked_event(asked_clause(q.focus or q.text)) if q.answer_type in ("version", "date") else "",
        past=asks_past(tokenize(q.focus or q.text)),
        # "… if I don't set one?": with nothing set, what holds is the default
        default=asks_default(q) or (condition is not None and absence_condition(focus)),
        kind=asked_kind(q.focus or q.text, q.answer_type),
        question=q.focus or q.text,
    )
    # a passage with a sentence that says nothing but the question's words is no answer
    asked = said(q.text)
    echoing = {id(s) for s in pool if echoes(s, asked) and not written_beyond(s, q.text)}
    # a change log's entry ("2.4.0 - added `colour`") records an event: it answers only a question about it
    records = set() if asks_history(q) else {id(s) for s in pool if change_record(s.text)}
    ranked = [
        p
        for p in judge.ranked(pool)
        if not any(id(s) in echoing or id(s) in records for s in p.sentences) and not fields_only(p.sentences)
    ]
    if asks_literal(
        q.text
    ):  # "the exact line …": only a passage quoting a literal says it (a path, a code span)
        ranked = [p for p in ranked if quotes_literal(passage_text(p))] or ranked
    passage = judge.best_of(form_first(q, ranked))
    if passage is None:
        return _listed(q, pool, scorer) if prose_list else None
    passage = named_antecedent(passage, ranked, judge)
    # how far ahead of the best passage of another unit it is (reported, for bench/status_features.py)
    rival = next((p for p in ranked if p.unit_id != passage.unit_id), None)
    margin = 1.0 if rival is None or passage.score <= 0 else max(0.0, 1 - rival.score / passage.score)
    if defaults_elsewhere(q, judge.said(passage) | set(terms(passage_text(passage)))):
        return None  # the default of another setting: the asked one's is never stated
    if (marked(q) or asks_default(q)) and unheld_entry(q, passage, judge):
        return None  # the figure, version or default of a neighbouring entry: the asked thing's is not stated
    if about_other_thing(q, passage):
        return None  # the version or date of the document itself (its opening line), not of the asked thing
    if q.answer_type:  # a typed question is answered by what answers it, not by its surroundings
        shorter = shortest_answering(passage, judge)
        # ... unless only its surroundings state what the question's form asks for ("The default is 3.")
        if not unstated(q, passage_text(shorter)) or unstated(q, passage_text(passage)):
            passage = shorter
    chosen = [
        with_led_row(with_led_code(completed(condensed(passage, judge), pool), m.code), pool, m.code, judge)
    ]
    if q.answer_type == "reason":
        chosen = [with_lead(with_reason(chosen[0], judge, pool), pool)]
    elif q.answer_type == "procedure":
        chosen = [with_steps(with_means(chosen[0], judge, pool), pool)]
    commanded: Passage | None = None  # the chosen sentence with the command it leads to
    if q.answer_type in ("command", "procedure") and (
        not judge.carries_type(chosen[0]) or announces_command(passage_text(chosen[0]))
    ):
        led = with_command(chosen[0], m.pool + m.code)
        if led is not chosen[0]:
            commanded, chosen = led, [led]
    if q.answer_type == "":  # "describe X": what else the evidence says of it, from other units
        for other in ranked:
            if len(chosen) >= OPEN_PASSAGES or other.score < passage.score * OPEN_SHARE:
                break
            if other.unit_id not in {c.unit_id for c in chosen} and judge.answers(other):
                chosen.append(completed(other, pool))
        chosen.sort(key=lambda p: p.sentences[0].order)
    parts = []
    for p in chosen:
        text = passage_text(p)
        if q.answer_type == "entity" and (named := _entry_name(p, q)):
            # "which function adds …": the entry the sentence leads is the answer
            text = labelled(named, text)
        if p.dated_by:
            when = find_type(p.dated_by, q.answer_type)
            shown = f"{when} ({p.dated_by})" if when and when != p.dated_by else p.dated_by
            text = f"{shown}: {text}"
        parts.append(text)
    coverage = max(p.coverage for p in chosen)
    conf = "high" if coverage >= 0.75 else ("medium" if coverage >= 0.55 else "low")
    ids = list(dict.fromkeys(s.unit.id for p in chosen for s in p.sentences))
    evidence = f"{sum(len(p.sentences) for p in chosen)} sentence(s), term coverage {coverage:.2f}"
    if passage.meaning is not None:
        evidence += f", meaning {passage.meaning:.2f}"
    # how far each view alone prefers the quoted section (reported, for bench/status_features.py)
    if shown := str(Leads(judge, passage, pool, [s for p in chosen for s in p.sentences])):
        evidence += f", {shown}"
    evidence += f", margin {margin:.2f}"
    supported = supports(judge, passage) or (commanded is not None and supports(judge, commanded))
    supported = supported and not leads_nowhere(chosen)
    if supported and asks_literal(q.text) and not any(quotes_literal(part) for part in parts):
        supported = False  # "the exact …" is answered by the text itself, not by a sentence about it
        evidence += "; asked verbatim, no literal quoted"
    answer = "\n\n".join(parts)
    if supported:
        kind, word = asked_kind(q.focus or q.text, q.answer_type)
        if not kind_stated(kind, word, answer, q.focus or q.text):
            supported = False  # "what is X good for?" answered by a sentence that only mentions X
            evidence += f"; no {kind} stated"
    if supported and refers_only(q, answer):
        supported = False  # "See RFC 9999 for …": the documents say where the answer is, not what it is
        evidence += "; only refers elsewhere"
    if supported and (
        silent := unspoken(q.focus or q.text, judge.said(passage) | set(terms(answer)), answer)
    ):
        supported = False  # "what happens to X when C?" answered by what X does in general
        evidence += f"; silent on '{' '.join(silent)}'"
    if supported and (value := typed_rival(q.answer_type, passage, answer, ranked, judge)):
        supported = False  # a section scoring as well gives another value: the evidence does not settle which
        evidence += f"; another section states '{value}'"
    return Outcome(answer, ids, conf if supported else "low", evidence, "sentences", supported)


def _entry_name(p: Passage, q: Question) -> str:
    """The heading of the section whose first sentence the passage opens, when the question does not name
    it and the passage does not write it (a reference's entry: "indent(text, prefix)" over "Add *prefix* to
    …"); otherwise "" (a definition unit is labelled by its term already)."""
    first = p.sentences[0]
    unit = first.unit
    heading = (unit.heading or "").strip()
    if first.order[2] != 0 or unit.unitIndex != 0 or unit.chunkType == "definition" or not heading:
        return ""
    named = set(terms(heading))
    if not named or named <= set(terms(q.text)) or heading.lower() in passage_text(p).lower():
        return ""
    return heading if len(heading) <= MAX_LABEL else ""


def _itemized(pool: list[Sentence], scorer: Scorer, q: Question) -> bool:
    """The sentence a list answer would quote first (the one sharing most of the question's weighted words)
    is an item of a list or table, or the sentence leading into one."""
    chosen = relevant(pool, scorer, BRIEF_LIMIT if q.brief else DEFAULT_LIMIT)
    return bool(chosen) and max(chosen, key=scorer.score).unit.chunkType in LISTS


def _listed(q: Question, pool: list[Sentence], scorer: Scorer, as_list: bool = True) -> Outcome | None:
    """A question that asks for a list, or about a list as a whole (its heading or lead-in names all the
    question asks: "What are the exit codes?"): the relevant items, a headed list whole."""
    limit = BRIEF_LIMIT if q.brief else DEFAULT_LIMIT
    headed = {s.unit.id for s in pool if s.under and scorer.headed(s)}
    chosen = (
        [s for s in pool if s.unit.id in headed and not s.lead] if headed else relevant(pool, scorer, limit)
    )
    chosen = drop_echoes(sorted(chosen, key=lambda s: s.order), q.text)
    if not chosen or max(scorer.score(s) for s in chosen) < MIN_SCORE:
        return None
    coverage = scorer.coverage(chosen)
    conf = "high" if coverage >= 0.75 else ("medium" if coverage >= 0.4 else "low")
    ids = list(dict.fromkeys(s.unit.id for s in chosen))
    # a synthesis of the sentences most like an open request, unless a heading names all it asks: no one
    # sentence was found to answer it, so it is the best candidate (weak), not `success`
    synthesis = not as_list and not headed
    evidence = f"{len(chosen)} items, term coverage {coverage:.2f}" + ("; a synthesis" if synthesis else "")
    return Outcome(render_list(chosen, as_list), ids, conf, evidence, "sentences", not synthesis)
