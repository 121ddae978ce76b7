"""The span an answer quotes: the shortest run of a passage that answers, a sentence that names what it says
rather than one that refers back to it, completed to read on its own (an anaphor's antecedent, what a
lead-in leads into), and a "why" told where its topic is."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import SHAPED_TYPES
from mrpvm.plugins.sdk.patterns import PRO_VERB, lazy_pattern, opens_with_anaphor, refers_back
from mrpvm.plugins.sdk.text import sentence_spans, terms
from msgspec.structs import replace

from .answer_form import states_default
from .asked_kind import field_named, labelled_fields
from .directives import is_instruction
from .evidence import BARE_CONDITION, Sentence
from .passages import Judge, Passage
from .unit_detail import MAX_LED, led_items

ANSWER_BUDGET = 300  # characters: a longer passage gives way to a shorter part of it that answers as well
ENTRY_NAME_CHARS = 40  # what a record of labelled fields opens with, up to this length, names it
MEANING_SLACK = 0.05  # ... and means the question nearly as closely
CONDENSE_SHARE = (
    0.5  # a sentence of a long statement is quoted when it states this share of what the best does
)


def shortest_answering(p: Passage, judge: Judge) -> Passage:
    """Length control: of a passage over ANSWER_BUDGET, the shortest run of its sentences that still answers
    (key terms, enough of the question's words, an answer of the asked shape) and is about as close in
    meaning; the passage itself when no part does."""
    # a passage that refers back is quoted with its antecedent: it is longer than it reads
    if len(p.sentences) < 2 or (len(p.text) <= ANSWER_BUDGET and not refers_back(p.sentences[0].text)):
        return p
    n = len(p.sentences)
    parts = [p.sentences[i:j] for i in range(n) for j in range(i + 1, n + 1) if j - i < n]
    parts.sort(key=lambda run: (sum(len(s.text) for s in run), run[0].order))
    detailed = judge.states_detail(p.sentences)
    for run in parts:
        if detailed and not judge.states_detail(run):
            continue  # the run leaves out the asked detail ("The default is 8") the passage states
        shorter = judge.score(run)
        if not judge.answers(shorter) or not (shorter.typed or judge.answer_type not in SHAPED_TYPES):
            continue
        if p.meaning is not None and (shorter.meaning or 0.0) < p.meaning - MEANING_SLACK:
            continue
        return shorter
    return p


_ROW = lazy_pattern(r"^(\s*[^\s—:][^—:]{0,40}?\s+—\s)(.*)$", re.S)  # a table row: "key — Column: cell"


def condensed(p: Passage, judge: Judge) -> Passage:
    """Length control inside one statement (a table row's long description, a long list item): its sentences
    that state the detail the question asks for (judge.states_detail_text: "The default value is 4."), the
    row's key kept, at any length; over ANSWER_BUDGET, else, its sentences that state about as much of the
    question as the one stating most (CONDENSE_SHARE of its weighted words, the key aside), in order. The
    passage itself when all or none would be kept."""
    if len(p.sentences) != 1 or p.sentences[0].code:
        return p  # code is quoted whole
    first = p.sentences[0]
    row = _ROW.match(first.text)
    key, body = (row.group(1), row.group(2)) if row else ("", first.text)
    fields = labelled_fields(body) if judge.attribute else []
    field = field_named(fields, judge.attribute)
    if field is not None and len(fields) > 1:
        # a record of labelled fields ("Late return: **Effect**: … **Penalty**: …"): the asked field, under
        # what the record opens with (its name) when that is short
        lead = body[: fields[0][1]] if fields[0][1] <= ENTRY_NAME_CHARS else ""
        text = key + lead + body[slice(*field)].rstrip()
        return replace(p, sentences=[replace(first, text=text)])
    spans = sentence_spans(body)
    if len(spans) < 2:
        return p
    kept = [n for n, (a, b) in enumerate(spans) if judge.states_detail_text(body[a:b])]
    if not kept and len(first.text) > ANSWER_BUDGET:
        named = set(terms(key))  # every sentence of a row is about its key: what else it says counts
        said = [judge.scorer._matched(set(terms(body[a:b])) - named) for a, b in spans]
        best = max(said, default=0.0)
        kept = [n for n, value in enumerate(said) if best > 0 and value >= best * CONDENSE_SHARE]
    if not kept or len(kept) == len(spans):
        return p
    parts = [body[slice(*spans[kept[0]])]]
    for before, n in zip(kept, kept[1:], strict=False):
        parts.append((" " if n == before + 1 else " … ") + body[slice(*spans[n])])
    return replace(p, sentences=[replace(first, text=key + "".join(parts))])


def _unit_sentences(unit_id: str, pool: list[Sentence]) -> list[Sentence]:
    """The sentences of one unit in `pool`, in reading order."""
    return sorted((s for s in pool if s.unit.id == unit_id), key=lambda s: s.order)


PRO_VERB_REACH = 3  # a pro-verb's antecedent is looked for this many sentences back at most


REASON_MAX_CHARS = 400


def with_lead(p: Passage, pool: list[Sentence]) -> Passage:
    """A "why" answered in the middle of a unit: the unit's lead sentence (what changed, what it is) comes
    first, when the answer stays short: the cause is told where the topic is."""
    unit = _unit_sentences(p.sentences[0].unit.id, pool)
    if not unit or unit[0] in p.sentences or unit[0].code:
        return p
    if len(unit[0].text) + sum(len(s.text) for s in p.sentences) > REASON_MAX_CHARS:
        return p
    return replace(p, sentences=[unit[0], *p.sentences])


# a sentence that gives a cause: the reason is in it, not after it
_CAUSAL = lazy_pattern(
    r"\b(?:because|since|due to|owing to|as a result|so that|in order to|therefore|thus|hence|reasons?)\b",
    re.I,
)


def with_reason(p: Passage, judge: Judge, pool: list[Sentence]) -> Passage:
    """A "why" answered by a sentence that only restates what is asked ("The JSON format was considered but
    rejected." for "Why was JSON rejected?": every word of the question, no cause given): the sentence after
    it in its unit tells why, when the answer stays short."""
    last = p.sentences[-1]
    if set(judge.scorer.weights) - judge.said(p) or any(_CAUSAL.search(s.text) for s in p.sentences):
        return p
    unit = _unit_sentences(last.unit.id, pool)
    after = unit[unit.index(last) + 1] if last in unit and unit.index(last) + 1 < len(unit) else None
    if after is None or after.code or len(p.text) + len(after.text) > REASON_MAX_CHARS:
        return p
    return replace(p, sentences=[*p.sentences, after])


def completed(p: Passage, pool: list[Sentence]) -> Passage:
    """A passage readable on its own: one that opens with an anaphor ("This was previously available via
    the -3 flag.") takes the sentence before it in its unit; one that ends with a lead-in ("… the
    following stanza:") goes on with what it leads into (the code or list after it)."""
    unit = _unit_sentences(p.sentences[0].unit.id, pool)
    sentences = list(p.sentences)
    first = unit.index(sentences[0]) if sentences[0] in unit else -1
    opening = sentences[0].text.strip()
    if first > 0 and PRO_VERB.match(opening) and not sentences[0].code:
        # "To do so, …" does what the last statement before it said to do, not a remark on it in between
        # ("This allows …"): the nearest sentence before it that does not itself refer back
        before = first - 1
        while before > 0 and first - before < PRO_VERB_REACH and refers_back(unit[before].text.strip()):
            before -= 1
        sentences.insert(0, unit[before])
    elif first > 0 and opens_with_anaphor(opening) and not sentences[0].code:
        sentences.insert(0, unit[first - 1])
    if sentences[-1] in unit:
        sentences = led_items(sentences, unit, len(p.sentences) + MAX_LED - len(sentences))
    if len(sentences) == len(p.sentences):
        return p
    return replace(p, sentences=sentences)


MAX_MORE_STEPS = 4


def with_steps(p: Passage, pool: list[Sentence]) -> Passage:
    """A "how do I" answered by an instruction: the instructions that follow it in its unit are the rest of
    the steps ("Go to Settings … Enter the code … Keep the backup codes …"); the first sentence that is not
    one (an example, a remark) ends them."""
    last = p.sentences[-1]
    if not (last.code or is_instruction(last.text)):
        return p
    unit = _unit_sentences(last.unit.id, pool)
    if last not in unit:
        return p
    more: list[Sentence] = []
    for s in unit[unit.index(last) + 1 :]:
        if len(more) >= MAX_MORE_STEPS or not (s.code or is_instruction(s.text)):
            break
        more.append(s)
    if not more:
        return p
    return replace(p, sentences=[*p.sentences, *more])


MAX_LEAD_PIECES = 3


def with_command(p: Passage, sentences: list[Sentence]) -> Passage:
    """A "which command" or "how do I" answered by a sentence that names no command ("You must first enable
    the feature."): the unit right after it in its chunk, when that unit leads into code ("… enter this
    command:" over a code block), completes it; so does the code block right after it in its own unit (a
    sentence that leads its section's code: sd-symbolic's tree.py keeps them together)."""
    end = p.sentences[-1]
    own = next(
        (
            s
            for s in sentences
            if s.code and s.unit.id == end.unit.id and s.order == (*end.order[:2], end.order[2] + 1)
        ),
        None,
    )
    if own is not None:
        return replace(p, sentences=[*p.sentences, own])
    last = end.unit
    if last.unitIndex is None:
        return p
    following = sorted(
        (
            s
            for s in sentences
            if s.unit.chunkId == last.chunkId
            and s.unit.sourceId == last.sourceId
            and s.unit.unitIndex == last.unitIndex + 1
            and s.unit.chunkType == "code"
        ),
        key=lambda s: s.order,
    )[:MAX_LEAD_PIECES]
    if not any(s.code for s in following):
        return p
    return replace(p, sentences=[*p.sentences, *following])


def named_antecedent(p: Passage, ranked: list[Passage], judge: Judge) -> Passage:
    """A chosen sentence that refers back ("This key must …") scores with its antecedent's words; when the
    antecedent alone (the sentence before it in its unit) answers as well, in the asked shape, and means the
    question at least as closely, the antecedent is quoted: it names what it says ("… is mandatory for the
    table: `requires`.")."""
    first = p.sentences[0]
    if len(p.sentences) != 1 or not opens_with_anaphor(first.text.strip()) or p.meaning is None:
        return p
    for other in ranked:
        if len(other.sentences) != 1 or other.sentences[0].unit.id != first.unit.id:
            continue
        before = other.sentences[0]
        if before.order[:2] != first.order[:2] or before.order[2] != first.order[2] - 1:
            continue
        if (
            judge.answers(other)
            and (other.typed or judge.answer_type not in SHAPED_TYPES)
            and (other.meaning or 0.0) >= p.meaning
            # ... and states as much of the question: "This only works when 'mode' is …" says what is asked
            # of the entry its antecedent only names
            and other.coverage >= p.coverage
        ):
            if judge.default and states_default(first.text) and not states_default(before.text):
                # "Set the folder … It defaults to /srv/x.": the default asked is the referring sentence's
                return next((w for w in ranked if w.sentences == [before, first]), p)
            return other
        break
    return p


def with_led_code(p: Passage, code: list[Sentence]) -> Passage:
    """A passage ending with a bare condition that leads into a code block ("If the name is missing:" over the
    error reply; evidence.py scores it with the block's words): the block, its consequence, completes it."""
    last = p.sentences[-1]
    if BARE_CONDITION.match(last.text) is None:
        return p  # "Install it from the package manager:" says what it says; the commands are not asked
    block = next(
        (
            s
            for s in code
            if s.unit.id == last.unit.id and s.order[:2] == last.order[:2] and s.order[2] == last.order[2] + 1
        ),
        None,
    )
    return p if block is None else replace(p, sentences=[*p.sentences, block])
