"""detectSeeds: a user turn becomes Intent Groups (DS004) and current-turn Context Units.

Questions and tasks become intents; output-shaping, validation, planning and decomposition instructions
become guidance KUs scoped to the phase that needs them (and shape the Output of the intents they apply
to); plain statements become evidence KUs (PhaseScopes kb-plugin). In `decompose` mode the prompt is one
intent to split into sub-intents for a child frame.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from mrpvm.plugins.sdk.answer_types import expected_type, is_choice
from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.text import STOPWORDS
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import DetectSeedsPayload
from mrpvm.protocol.vocab import PHASE_SCOPES

from ..shared.roles import condition_of, group_role
from ..shared.topics import entities, key_phrases, topic_of
from ..shared.triples import extract_triple
from .acts import WH, criterion_for, detect_act, evidence_for, is_yes_no, strip_polite
from .followups import resolve
from .instructions import Found, find_cues, is_instruction_sentence, strip_edge_cues
from .turn import clean_lead, looks_like_request, split_turn

TURN_SOURCE_NAME = "Current-Turn Context"
_PRONOUNS = word_set("he she it they him her them his its their theirs hers this these those")
_WORD = re.compile(r"[A-Za-z][\w'-]*")
_LIST_FORM = re.compile(
    r"^(?:list|enumerate)\b|\bname (?:all|some|several|two|three|four|five|\d+)\b"
    r"|^what are (?:the |some )?(?:\w+ ){0,2}\w+s\b(?! of\b)|\b(?:which|what) \w+s (?:are|were|did|do)\b",
    re.IGNORECASE,
)
_STEPS_FORM = re.compile(
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


@dataclass(slots=True)
class SeedOutcome:
    intents: list[IntentGroup]
    units: list[KnowledgeUnit]
    confidence: str = "high"
    notes: str = ""


@dataclass(slots=True)
class _Question:
    text: str
    start: int
    end: int
    order: int
    act: str = "explain"
    matched: bool = True
    phrases: list[str] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)
    extra_context: list[str] = field(default_factory=list)
    premise: str = ""  # the statements just before it in the turn ("The build passes but the cache …")


@dataclass(slots=True)
class _Instruction:
    text: str
    start: int
    end: int
    order: int
    cues: list[Found]
    targets: list[int] = field(default_factory=list)  # question indexes it applies to


def _sentence_case(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if text else text


def _ensure_end(text: str, question: bool) -> str:
    if text and text[-1] not in ".?!":
        return text + ("?" if question else ".")
    return text


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


def _has_pronoun(text: str) -> bool:
    return any(w.lower() in _PRONOUNS for w in _WORD.findall(text))


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
            hash=hashlib.sha256(claim.encode()).hexdigest()[:16],
            **extra,  # type: ignore[arg-type]
        )
        self.units.append(unit)
        return unit


def detect_seeds(prompt: str, payload: DetectSeedsPayload, created_at: str = "") -> SeedOutcome:
    turn_id = "-".join((payload.turnId or "turn").split())
    if payload.mode == "decompose":
        return _decompose(prompt, payload, turn_id, created_at)
    return _detect(prompt, payload, turn_id, created_at)


@dataclass(slots=True)
class _Turn:
    """The pieces of a turn, classified."""

    questions: list[_Question] = field(default_factory=list)
    instructions: list[_Instruction] = field(default_factory=list)
    statements: list[tuple[str, int, int]] = field(default_factory=list)
    inline: list[tuple[int, Found, int]] = field(default_factory=list)  # (question, cue, cue offset)


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
            turn.instructions.append(_Instruction(_sentence_case(lead), span.start, span.end, order, cues))
        elif looks_like_request(raw):
            body, _removed = strip_edge_cues(lead, cues)
            text = _sentence_case(body or lead)
            question = bool(WH.match(text) or is_yes_no(text))
            q = _Question(_ensure_end(text, question), span.start, span.end, order)
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
        turn.questions.append(_Question(_ensure_end(_sentence_case(clean_lead(raw)), False), start, end, 0))
    if not turn.questions:  # only instructions: the whole turn is the request
        text = _sentence_case(clean_lead(prompt.strip())) or " ".join(prompt.split())
        turn.questions.append(_Question(text, 0, len(prompt), 0))
    _attach_premises(prompt, turn)
    return turn


# Analytic tasks: the question after one frames the analysis ("Compare X and Y. How do their goals
# converge?"); after a plain request ("Describe X. How did it decline?") a question asks something more.
_TASK = re.compile(r"^(?:analy[sz]e|compare|contrast|evaluate|assess)\b", re.IGNORECASE)
_ALSO = re.compile(r"^\s*(?:and\s+)?(?:also|additionally|separately|next|second(?:ly)?)\b", re.IGNORECASE)


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
            and _has_pronoun(q.text)
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
            _ensure_end(_sentence_case(clean_lead(raw)), False)
            for raw, start, end in turn.statements
            if after <= start and end <= q.start
        ]
        q.premise = " ".join(t for t in told if t)
        if not q.premise and n and _has_pronoun(q.text) and not told:
            q.premise = turn.questions[n - 1].premise  # "…, and what was the size before that?"


def _detect(prompt: str, payload: DetectSeedsPayload, turn_id: str, created_at: str) -> SeedOutcome:
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
            text = _ensure_end(_sentence_case(f.text), False)
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
        if _has_pronoun(q.text):
            q.text = resolve(
                q.text, asked
            )  # "What is its default?" -> "... the default of ServerAliveInterval?"
        asked.insert(0, q.text)
        q.act, q.matched = detect_act(q.text)
        q.phrases = key_phrases(strip_polite(q.text))
        own = [p for p, _ in entities(q.text)]
        if _has_pronoun(q.text) and not own:
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
    claim = _ensure_end(_sentence_case(clean_lead(raw)), False)
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


# --------------------------------------------------------------------------- decompose mode

_COMPARE_SIDES = re.compile(
    r"^(?:compare|contrast)\s+(?:(?P<aspect>the\s+.+?|\w+(?:\s+and\s+\w+)?)\s+(?:of|between|for)\s+)?(?P<sides>.+)$"
    r"|\bdifferences?\s+between\s+(?P<sides2>.+)$"
    r"|\bhow\s+(?:does|do|did|is|are)\s+(?P<a>.+?)\s+(?:differ|different)\s+from\s+(?P<b>.+)$",
    re.IGNORECASE,
)
_SIDE_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|versus|vs\.?|or|with)\s+", re.IGNORECASE)
_ASPECTS = re.compile(
    r"\b(?P<det>the|what|which|their|his|her|its)\s+(?P<a>\w+(?:\s+\w+)?)\s+and\s+(?P<b>\w+)"
    r"\s+(?P<rest>(?:of|made|make|makes|that|did|does|do|are|were|is|was|for|behind|led)\b.*)$",
    re.IGNORECASE,
)


_CHAIN = re.compile(
    r"\b(?:links?|linked|connects?|connected|leads?|led)\s+(?:from\s+)?(?P<x>(?:the\s+)?\w.+?)\s+(?:to|with)\s+"
    r"(?P<y>(?:the\s+)?\w.+)$"
    r"|\b(?:how|why|whether)\s+(?P<x3>.+?)\s+(?:led|leads|lead|caused|causes|cause|resulted\s+in|results\s+in"
    r"|triggered|triggers)\s+(?:to\s+)?(?P<y3>.+)$",
    re.IGNORECASE,
)
# "from X to Y" is a cause-effect chain only when the question says it is about causes or a sequence.
_FROM_TO = re.compile(r"\bfrom\s+(?P<x>(?:the|a|an)\s+.+?)\s+to\s+(?P<y>(?:the|a|an)\s+.+)$", re.IGNORECASE)
_CAUSAL_CUE = re.compile(
    r"\b(?:cause|causes|caused|effect|effects|chain|consequences?|sequence|led|lead|leads|result|resulted|trigger"
    r"|triggered|steps?)\b",
    re.IGNORECASE,
)
_ALTERNATIVE = re.compile(r"\s+(?:instead\s+of|rather\s+than)\s+", re.IGNORECASE)
# Predicates that hold between the coordinated things together: splitting them would change the question.
_RELATIONAL = re.compile(
    r"\b(?:between|together|both|common|each other|one another|differ\w*|differences?|similar\w*|compare\w*"
    r"|contrast\w*|versus|vs|relationship|relate\w*|interact\w*|combined|jointly|same)\b",
    re.IGNORECASE,
)
_FUNCTION = r"(?!(?:of|in|on|at|for|with|by|from|to|and|or|but|is|are|was|were|do|does|did|have|has|that|which|who)\b)"
_NP = rf"(?:(?:the|a|an|their|its|his|her)\s+)?{_FUNCTION}[\w.'’-]+(?:\s+{_FUNCTION}(?!(?:the|a|an)\b)[\w.'’-]+){{0,3}}?"
_COORDINATED = re.compile(
    rf"(?P<items>(?:{_NP})(?:\s*,\s*(?:{_NP}))*,?\s+and\s+(?:{_NP}))(?=\s*(?:[?.!,;:]|$|\s(?P<next>[a-z]\w*)))"
)
_AUX_WORDS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
        "must",
    ]
)
_PLURAL_AUX = {"are": "is", "were": "was", "have": "has", "do": "does"}


def _sub_intent(index: int, text: str) -> IntentGroup:
    act, _ = detect_act(text)
    focus = key_phrases(text)
    return IntentGroup(
        index=index,
        act=act,
        intent=text,
        context="; ".join(focus) or text,
        criterion=criterion_for(act, focus),
        evidence=evidence_for(act, focus),
        output="brief" if act == "identify" else "paragraph",
        answerType=expected_type(text),
    )


def _split_subjects(text: str, act: str) -> list[str]:
    """Sub-questions of one intent, each a whole question or task: one per compared side or alternative
    ("X instead of Y"), one per link of a cause-effect chain, one per coordinated aspect ("the skills and
    tools that …") or coordinated entity ("… of the R5 and the X9"). Nothing sound to split: no sub-questions.
    """
    body = text.rstrip(" .?!")
    requests = _requests(text)
    m = _COMPARE_SIDES.search(requests[0].rstrip(" .?!") if requests else body)
    if act == "compare" and m:
        sides_text = m.group("sides") or m.group("sides2")
        sides = (
            [s for s in _SIDE_SPLIT.split(sides_text) if s.strip()]
            if sides_text
            else [m.group("a"), m.group("b")]
        )
        aspect = (m.group("aspect") or "").strip() if sides_text else ""
        if len(sides) >= 2:
            return [f"Describe {aspect + ' of ' if aspect else ''}{side.strip()}." for side in sides[:4]]
    alternatives = _alternatives(body)
    if alternatives:
        return [f"Describe {side}." for side in alternatives]
    if act in ("explain", "describe"):
        cm = _CHAIN.search(body)
        if cm and cm.group("x3"):
            return [f"What were the effects of {cm.group('x3')}?", f"What caused {cm.group('y3')}?"]
        if cm:
            return [f"What happened after {cm.group('x')}?", f"What led to {cm.group('y')}?"]
        fm = _FROM_TO.search(body)
        if fm and _CAUSAL_CUE.search(body):
            return [f"What happened after {fm.group('x')}?", f"What led to {fm.group('y')}?"]
    am = _ASPECTS.search(body)
    if am and not {w.lower() for w in (am.group("a") + " " + am.group("b")).split()} & _AUX_WORDS:
        question = bool(WH.match(body))
        end = "?" if question else "."
        prefix = body[: am.start()]
        return [
            _sentence_case(f"{prefix}{am.group('det')} {part} {am.group('rest')}") + end
            for part in (am.group("a"), am.group("b"))
        ]
    return _coordinated(text)


def _alternatives(body: str) -> list[str]:
    """'… Vex had found the obelisk instead of Dr. Elara Vance …' → the two alternatives (names when the
    second one is a name, else the noun phrases on either side)."""
    m = _ALTERNATIVE.search(body)
    if not m:
        return []
    before, after = body[: m.start()], body[m.end() :]
    after = re.split(r"[,;:?!]|\.(?!\s*[A-Z])", after, maxsplit=1)[0]
    right = [p for p, _ in entities(after)]
    if right and after.lstrip().startswith(right[0].split()[0]):
        clause = re.split(r"[,;:?!]|\.(?!\s*[A-Z])", before)[-1]
        left = [p for p, _ in entities(clause)]
        if left and left[-1] != right[0]:
            return [left[-1], right[0]]
        return []
    b = _noun_phrase(after.split(), from_start=True)
    a = _noun_phrase(before.split(), from_start=False)
    return [a, b] if a and b and a.lower() != b.lower() else []


def _noun_phrase(toks: list[str], from_start: bool) -> str:
    """A short noun phrase at the start (or end) of a word list: up to three words, determiners dropped."""
    stop = STOPWORDS
    if from_start:
        while toks and toks[0].lower() in ("the", "a", "an"):
            toks = toks[1:]
        out: list[str] = []
        for w in toks[:3]:
            if w.lower() in stop:
                break
            out.append(w)
        return " ".join(out)
    tail = toks[-4:]
    for k in range(len(tail) - 1, -1, -1):
        if tail[k].lower() in ("the", "a", "an", "their", "its", "his", "her", "this", "that"):
            return " ".join(tail[k + 1 :])
    return " ".join(tail[-1:]) if tail and tail[-1].lower() not in stop else ""


def _coordinated(text: str) -> list[str]:
    """'What are the prices of the R5 and the X9?' → one question per coordinated noun phrase, when the
    predicate does not relate them to each other and the phrases read as one kind (all names, or all
    opened by a determiner). An auxiliary before a coordinated subject agrees with one item ("do X and Y
    cost" → "does X cost"); a coordinated subject followed by a bare verb is left alone."""
    if _RELATIONAL.search(text):
        return []
    first = re.match(r"\s*\S+\s+", text)  # the question word or task verb opens the turn: not an item
    starts = [w.start() for w in re.finditer(r"\b\w", text) if first is None or w.start() >= first.end()]
    for start in starts:
        m = _COORDINATED.match(text, start)
        if m is None:
            continue
        items = [i.strip() for i in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m.group("items")) if i.strip()]
        if len(items) < 2 or len(items) > 4:
            continue
        named = all(i[:1].isupper() or i.split()[0].lower() in ("the", "a", "an") for i in items)
        if not named or any(i.split()[0].lower() in STOPWORDS - {"the", "a", "an"} for i in items):
            continue
        before = text[: m.start()].rstrip()
        prev = before.split()[-1].lower() if before.split() else ""
        nxt = (m.group("next") or "").lower()
        subject = prev in _PLURAL_AUX
        if not subject and nxt and nxt not in STOPWORDS and m.group("next")[:1].islower():
            continue  # "the Tokyo office and the Berlin office handle …": a subject with a plural verb
        out = []
        for item in items:
            head = before[: len(before) - len(prev)] + _PLURAL_AUX[prev] if subject else before
            question = text.rstrip().endswith("?")
            out.append(_ensure_end(_sentence_case(f"{head} {item}{text[m.end() :]}".strip()), question))
        return out
    return []


def _requests(text: str) -> list[str]:
    """The separate requests (questions and tasks) one intent text holds, each as a whole sentence."""
    out = []
    for span in split_turn(text):
        raw = text[span.start : span.end]
        lead = clean_lead(raw)
        if any(c.isalnum() for c in lead) and looks_like_request(raw):
            out.append(_ensure_end(_sentence_case(lead), bool(WH.match(lead) or is_yes_no(lead))))
    return out


def _decompose(prompt: str, payload: DetectSeedsPayload, turn_id: str, created_at: str) -> SeedOutcome:
    first = _detect(prompt, DetectSeedsPayload(turnId=turn_id, history=payload.history), turn_id, created_at)
    if len(first.intents) >= 2:
        first.notes = "decomposed into the turn's separate questions"
        return first
    parent = first.intents[0]
    given = payload.parentIntent
    if given is not None:  # the parent frame's reading wins: its act, its Output, its context
        parent.act, parent.output = given.act, given.output
        parent.context = "; ".join(
            dict.fromkeys(p for p in (given.context + "; " + parent.context).split("; ") if p)
        )
    subs = _split_subjects(parent.intent, parent.act)
    if len(subs) < 2:  # an intent that holds several requests ("Analyze X. What made him …?") splits there
        subs = _requests(parent.intent)
    subs = [t for t in subs if t.rstrip("?.").lower() != parent.intent.rstrip("?.").lower()]
    if len(subs) < 2:  # nothing sound to split: the intent unchanged
        parent.index = 1
        return SeedOutcome([parent], first.units, first.confidence, "nothing to split: the intent unchanged")
    intents = [_sub_intent(i, sub) for i, sub in enumerate(subs, 1)]
    inherited = [p for p, _ in entities(parent.context)]
    for sub in intents:
        if _has_pronoun(sub.intent) and not entities(sub.intent):
            sub.context = "; ".join(dict.fromkeys([*sub.context.split("; "), *inherited]))
    act = parent.act
    parent.index = len(intents) + 1
    intents.append(parent)
    note = f"decomposed {act} intent into {len(intents) - 1} sub-intents plus the original"
    return SeedOutcome(intents, first.units, first.confidence, note)
