"""detectSeeds in `detect` mode (turn_seeds/intents.py): a user turn becomes Intent Groups (DS004) and
current-turn Context Units. Entry: `detect_intents`.

Questions and tasks become intents; output-shaping, validation, planning and decomposition instructions
become guidance KUs scoped to the phase that needs them (and shape the Output of the intents they apply
to); plain statements become evidence KUs (PhaseScopes kb-plugin).
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.answer_types import expected_type, is_choice
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.protocol.digests import sha256
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import DetectSeedsPayload
from mrpvm.protocol.vocab import PHASE_SCOPES

from ..shared.roles import condition_of, group_role
from ..shared.topics import entities, key_phrases, topic_of
from ..shared.triples import extract_triple
from .acts import WH, criterion_for, detect_act, evidence_for, is_yes_no, strip_polite
from .followups import resolve
from .instructions import Found, find_cues, is_instruction_sentence, strip_edge_cues
from .turn import clean_lead, ensure_end, has_pronoun, looks_like_request, sentence_case, split_turn

TURN_SOURCE_NAME = "Current-Turn Context"
_LIST_FORM = lazy_pattern(
    r"^(?:list|enumerate)\b|\bname (?:all|some|several|two|three|four|five|\d+)\b"
    r"|^what are (?:the |some )?(?:\w+ ){0,2}\w+s\b(?! of\b)|\b(?:which|what) \w+s (?:are|were|did|do)\b",
    re.IGNORECASE,
)
_STEPS_FORM = lazy_pattern(
    r"\bsteps?\b|\bprocedure\b|\bhow (?:do|can|should) (?:i|we)\b|^how to\b", re.IGNORECASE
)
_KIND_TOPIC = {
    "output": "answer format",
    "validation": "validation rule",
    "planning": "planning hint",
    "decomposition": "decomposition hint",
}
# Output values, strongest constraint first.
_OUTPUT_ORDER = ("yes/no", "single word", "list", "steps", "brief")


class SeedOutcome(msgspec.Struct):
    intents: list[IntentGroup]
    units: list[KnowledgeUnit]
    confidence: str = "high"
    notes: str = ""


class _Question(msgspec.Struct):
    text: str
    start: int
    end: int
    order: int
    act: str = "explain"
    matched: bool = True
    phrases: list[str] = msgspec.field(default_factory=list)
    effects: list[str] = msgspec.field(default_factory=list)
    extra_context: list[str] = msgspec.field(default_factory=list)
    premise: str = ""  # the statements just before it in the turn ("The build passes but the cache …")


class _Instruction(msgspec.Struct):
    text: str
    start: int
    end: int
    order: int
    cues: list[Found]
    targets: list[int] = msgspec.field(default_factory=list)  # question indexes it applies to


def _output_for(q: _Question) -> str:
    effects = set(q.effects)
    # "Is it counted from 0 or from 1?" offers options: the answer names one, it is no Yes/No
    yes_no_form = (q.act == "evaluate" or is_yes_no(q.text)) and not is_choice(q.text)
    if "yes/no" in effects or ("single word" in effects and yes_no_form):
        return "yes/no" if yes_no_form or "single word" not in effects else "single word"
    for value in _OUTPUT_ORDER[1:]:
        if value in effects:
            return value
    if "detailed" in effects:
        return "comparison" if q.act == "compare" else "paragraph"
    if yes_no_form:
        return "yes/no"
    if q.act == "compare":
        return "comparison"
    if q.act == "implement" or (q.act != "explain" and _STEPS_FORM.search(q.text)):
        return "steps"
    if _LIST_FORM.search(q.text):
        return "list"
    if q.act == "identify":
        return "brief"
    return "paragraph"


def _scopes(cues: list[Found]) -> list[str]:
    wanted = {s for f in cues for s in f.cue.scopes}
    return [s for s in PHASE_SCOPES if s in wanted]


class _UnitMaker:
    """Session KUs of one turn: `session::<turnId>::unit-NNN` with provenance into the prompt."""

    def __init__(self, turn_id: str, created_at: str):
        self.source = f"session::{turn_id}"
        self.created_at = created_at
        self.units: list[KnowledgeUnit] = []

    def add(self, role: str, topic: str, claim: str, start: int, end: int, **extra: object) -> KnowledgeUnit:
        index = len(self.units)
        unit = KnowledgeUnit(
            id=f"{self.source}::unit-{index:03d}",
            sourceId=self.source,
            chunkId=f"{self.source}::chunk-000",
            kuType="atomic",
            role=role,
            topic=topic or "turn",
            claim=claim,
            sourceName=TURN_SOURCE_NAME,
            sourceType="turn",
            chunkIndex=0,
            unitIndex=index,
            charStart=start,
            charEnd=end,
            createdAt=self.created_at,
            hash=sha256(claim.encode()).hexdigest()[:16],
            **extra,  # type: ignore[arg-type]
        )
        self.units.append(unit)
        return unit


class _Turn(msgspec.Struct):
    """The pieces of a turn, classified."""

    questions: list[_Question] = msgspec.field(default_factory=list)
    instructions: list[_Instruction] = msgspec.field(default_factory=list)
    statements: list[tuple[str, int, int]] = msgspec.field(default_factory=list)
    inline: list[tuple[int, Found, int]] = msgspec.field(default_factory=list)  # (question, cue, cue offset)


def _classify(prompt: str) -> _Turn:
    """Each piece is an instruction (how to answer), a request (what to answer) or a statement."""
    turn = _Turn()
    for order, span in enumerate(split_turn(prompt), 1):
        raw = prompt[span.start : span.end]
        lead = clean_lead(raw)
        if not any(c.isalnum() for c in lead):
            continue  # a bare marker or punctuation
        cues = find_cues(lead)
        if is_instruction_sentence(lead, cues):
            turn.instructions.append(_Instruction(sentence_case(lead), span.start, span.end, order, cues))
        elif looks_like_request(raw):
            body, _removed = strip_edge_cues(lead, cues)
            text = sentence_case(body or lead)
            question = bool(WH.match(text) or is_yes_no(text))
            q = _Question(ensure_end(text, question), span.start, span.end, order)
            offset = span.start + max(0, raw.find(lead))
            for f in cues:
                turn.inline.append((len(turn.questions), f, offset))
                if f.cue.output:
                    q.effects.append(f.cue.output)
            turn.questions.append(q)
        else:
            turn.statements.append((raw, span.start, span.end))
    if not turn.questions and turn.statements:  # "The boiler keeps failing." is itself the request
        raw, start, end = turn.statements.pop()
        turn.questions.append(_Question(ensure_end(sentence_case(clean_lead(raw)), False), start, end, 0))
    if not turn.questions:  # only instructions: the whole turn is the request
        text = sentence_case(clean_lead(prompt.strip())) or " ".join(prompt.split())
        turn.questions.append(_Question(text, 0, len(prompt), 0))
    _attach_premises(prompt, turn)
    return turn


# Analytic tasks: the question after one frames the analysis ("Compare X and Y. How do their goals
# converge?"); after a plain request ("Describe X. How did it decline?") a question asks something more.
_TASK = lazy_pattern(r"^(?:analy[sz]e|compare|contrast|evaluate|assess)\b", re.IGNORECASE)
_ALSO = lazy_pattern(r"^\s*(?:and\s+)?(?:also|additionally|separately|next|second(?:ly)?)\b", re.IGNORECASE)


def _merge_elaborations(questions: list[_Question]) -> list[_Question]:
    """A question that only points back at the task before it ("Compare X and Y. How do their goals
    converge?") elaborates that task: one intent, asked as the task. A question with a subject of its own,
    or opened by "Also", is a question of its own."""
    out: list[_Question] = []
    for q in questions:
        prev = out[-1] if out else None
        if (
            prev is not None
            and _TASK.match(prev.text)
            and not prev.text.rstrip().endswith("?")
            and has_pronoun(q.text)
            and not entities(q.text)
            and not _ALSO.match(q.text)
        ):
            prev.text = f"{prev.text} {q.text}"
            prev.end = q.end
            prev.effects.extend(q.effects)
            continue
        out.append(q)
    return out


def _attach_premises(prompt: str, turn: _Turn) -> None:
    """The statements right before a question (after the question before it) are its premise: "The build
    passes but the cache stays empty. What should I check?" asks about the build and the cache."""
    for n, q in enumerate(turn.questions):
        after = turn.questions[n - 1].end if n else -1
        told = [
            ensure_end(sentence_case(clean_lead(raw)), False)
            for raw, start, end in turn.statements
            if after <= start and end <= q.start
        ]
        q.premise = " ".join(t for t in told if t)
        if not q.premise and n and has_pronoun(q.text) and not told:
            q.premise = turn.questions[n - 1].premise  # "…, and what was the size before that?"


def detect_intents(prompt: str, payload: DetectSeedsPayload, turn_id: str, created_at: str) -> SeedOutcome:
    turn = _classify(prompt)
    notes: list[str] = []
    questions = _merge_elaborations(turn.questions)
    if len(questions) > payload.maxIntents > 0:
        notes.append(f"{len(questions) - payload.maxIntents} intents beyond maxIntents dropped")
        questions = questions[: payload.maxIntents]
    _scope_instructions(questions, turn.instructions)
    _analyse(questions, payload.history)
    maker = _UnitMaker(turn_id, created_at)
    for ins in turn.instructions:
        outputs = [f.cue.output for f in ins.cues if f.cue.output]
        _guidance_unit(maker, ins.text, ins.cues, outputs, ins.targets, ins.start, ins.end)
    for qi, f, offset in turn.inline:
        if qi < len(questions):
            text = ensure_end(sentence_case(f.text), False)
            outputs = [f.cue.output] if f.cue.output else []
            _guidance_unit(maker, text, [f], outputs, [qi], offset + f.start, offset + f.end)
    for raw, start, end in turn.statements:
        _statement_unit(maker, raw, start, end)
    defaults = [f"intent-{i}" for i, q in enumerate(questions, 1) if not q.matched]
    if defaults:
        notes.append("default act used for " + ", ".join(defaults))
    intents = [_intent(i, q) for i, q in enumerate(questions, 1)]
    return SeedOutcome(intents, maker.units, "medium" if defaults else "high", "; ".join(notes))


def _analyse(questions: list[_Question], history: list[str]) -> None:
    """Act and key phrases of each question; a question that only points back ("How did it end?")
    inherits the entities of the one before it (or of the previous turn)."""
    previous = _history_entities(history)
    asked: list[str] = list(reversed(history))  # newest first
    for q in questions:
        if has_pronoun(q.text):
            # "What is its default?" -> "... the default of ServerAliveInterval?"; the statements just before
            # the question are the nearest earlier text ("Some processes are marked <defunct>. What are they?")
            q.text = resolve(q.text, [q.premise, *asked] if q.premise else asked)
        asked.insert(0, q.text)
        q.act, q.matched = detect_act(q.text)
        q.phrases = key_phrases(strip_polite(q.text))
        own = [p for p, _ in entities(q.text)]
        if has_pronoun(q.text) and not own:
            known = {p.lower() for p in q.phrases}
            q.extra_context = [e for e in previous if e.lower() not in known]
        if own:
            previous = own


def _guidance_unit(
    maker: _UnitMaker,
    text: str,
    cues: list[Found],
    outputs: list[str],
    targets: list[int],
    start: int,
    end: int,
) -> None:
    kinds = list(dict.fromkeys(f.cue.kind for f in cues))
    note = "; ".join(kinds)
    if outputs:
        note += f"; output {', '.join(outputs)}"
    note += "; applies to " + ", ".join(f"intent-{t + 1}" for t in targets)
    maker.add(
        "Constraint",
        _KIND_TOPIC[kinds[0]],
        text,
        start,
        end,
        phaseScopes=_scopes(cues),
        utilityNote=note,
        unitType="turn-instruction",
    )


def _history_entities(history: list[str]) -> list[str]:
    for turn in reversed(history):
        found = [p for p, _ in entities(turn)]
        if found:
            return list(dict.fromkeys(found))[:4]
    return []


def _scope_instructions(questions: list[_Question], instructions: list[_Instruction]) -> None:
    """Before the first question or after the last one: every question; between questions: the one before."""
    if not questions:
        return
    first, last = questions[0].order, questions[-1].order
    between = any(first < ins.order < last for ins in instructions)
    for ins in instructions:
        if ins.order < first or (ins.order > last and not between):
            ins.targets = list(range(len(questions)))
        else:
            before = [i for i, q in enumerate(questions) if q.order < ins.order]
            ins.targets = [before[-1]] if before else [0]
        for t in ins.targets:
            questions[t].effects.extend(f.cue.output for f in ins.cues if f.cue.output)


def _intent(index: int, q: _Question) -> IntentGroup:
    premise = key_phrases(strip_polite(q.premise)) if q.premise else []
    focus = list(dict.fromkeys(q.phrases + premise + q.extra_context))
    context = "; ".join(focus) if focus else q.text.rstrip("?.!")
    return IntentGroup(
        index=index,
        act=q.act,
        intent=f"{q.premise} {q.text}" if q.premise else q.text,
        context=context,
        criterion=criterion_for(q.act, focus),
        evidence=evidence_for(q.act, focus),
        output=_output_for(q),
        answerType=expected_type(q.text.split("? ")[-1]),
    )


def _statement_unit(maker: _UnitMaker, raw: str, start: int, end: int) -> None:
    claim = ensure_end(sentence_case(clean_lead(raw)), False)
    triple = extract_triple(claim)
    role = group_role([claim])
    extra: dict[str, object] = {
        "phaseScopes": ["kb-plugin"],
        "condition": condition_of(claim),
        "unitType": "turn-statement",
    }
    if triple is not None:
        extra.update(
            subject=triple.subject,
            relation=triple.relation,
            object=triple.object,
            confidence=triple.confidence,
        )
    maker.add(role, triple.subject if triple else topic_of([claim]), claim, start, end, **extra)
