"""Evaluation suites (DS021): `mrpvm eval DIR...` measures answers, intents and the evidence actually used.

A suite is a folder holding a story (`story.nl`, or the eval.json's `storyFile`) and `eval.json`
(suiteId, questions with `input` and `expected`). Per suite: ONE fresh session, the story loaded as
session context (`load_session_context` with the suite's `ingestSeedDetectorPlugin`, else sd-symbolic),
then every question asked in that session through `run_turn`, in order. Plugins are pinned only when
a combo is given (`--combo SD,KB,GS`); otherwise the engine (planners) chooses, and a suite's
`pluginCombos` are informational.

Scoring, per question (all matching is case-insensitive, on whole words/phrases: "No" does not match
"not", "Vex" does not match "Vexed"; whitespace and typographic quotes/dashes are normalised):
- intents: each expected intent's `intentMustMention` terms all appear in the text of one detected
  intent (a response group's intent); with `orderIndependent` (the default) the expected intents are
  matched to distinct detected intents in any order, otherwise expected intent i to detected intent i.
- context: checked against the evidence actually used — the title and statement of every unit of the
  knowledge view the answer was produced from (`evidenceIds` of the response groups, sub-answers
  included), never the answer. contextPass = every `contextMustMention` found and no
  `contextMustNotMention` found.
  recall    = found contextMustMention / |contextMustMention|        (1.0 when none is asked for)
  precision = 1 - found contextMustNotMention / |contextMustNotMention|  (1.0 when none is forbidden)
  f1        = 2PR / (P + R)  (0.0 when both are 0)
  DS021 does not define these further; the definition is term-level because the suites name terms,
  not gold units.
- answer: answerPass = every `answerMustMention` found and no `answerMustNotContain` found in the
  answer text (all groups' answers joined).

Evaluation measures; it never fails on a low score. Bad suites raise `SuiteError` (exit 2 in the CLI).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.kernel.errors import BadInput, KernelError
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

EVAL_FILE = "eval.json"
DEFAULT_STORY = "story.nl"
DEFAULT_INGEST_SD = "sd-symbolic"
COMBO_STAGES = ("sd", "kb", "gs")


class SuiteError(BadInput, code="BAD_SUITE"):
    """A suite folder that cannot be evaluated (missing, no eval.json, invalid eval.json, no story)."""


# --------------------------------------------------------------------------- suite files


class ExpectedIntent(msgspec.Struct, kw_only=True):
    intentMustMention: list[str] = []
    orderIndependent: bool = True


class Expected(msgspec.Struct, kw_only=True):
    intents: list[ExpectedIntent] = []
    contextMustMention: list[str] = []
    contextMustNotMention: list[str] = []
    answerMustMention: list[str] = []
    answerMustNotContain: list[str] = []


class EvalQuestion(msgspec.Struct, kw_only=True):
    id: str
    input: str
    expected: Expected = msgspec.field(default_factory=Expected)


class PluginCombo(msgspec.Struct, kw_only=True):
    label: str = ""
    plannerPlugin: str | None = None
    seedDetectorPlugin: str | None = None
    kbPlugin: str | None = None
    goalSolverPlugin: str | None = None


class SuiteSpec(msgspec.Struct, kw_only=True):
    """eval.json. Unknown keys are tolerated (suites may carry notes for humans)."""

    suiteId: str
    questions: list[EvalQuestion]
    title: str = ""
    description: str = ""
    storyFile: str = DEFAULT_STORY
    ingestProcessingMode: str | None = None
    ingestSeedDetectorPlugin: str | None = None
    pluginCombos: list[PluginCombo] = []


@dataclass(slots=True)
class Suite:
    folder: Path
    spec: SuiteSpec
    story: str
    story_name: str


def load_suite(folder: Path | str) -> Suite:
    """Read and check one suite folder; every problem is a one-line `SuiteError`."""
    folder = Path(folder)
    if not folder.exists():
        raise SuiteError(f"suite folder not found: {folder}")
    if not folder.is_dir():
        raise SuiteError(f"not a suite folder (a file): {folder}")
    path = folder / EVAL_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SuiteError(f"{folder}: no {EVAL_FILE}") from None
    except OSError as err:
        raise SuiteError(f"{path}: cannot read ({err.strerror})") from None
    try:
        spec = msgspec.json.decode(raw, type=SuiteSpec)
    except msgspec.ValidationError as err:
        raise SuiteError(f"{path}: invalid suite: {err}") from None
    except msgspec.DecodeError as err:
        raise SuiteError(f"{path}: not valid JSON ({err})") from None
    problems = _spec_problems(spec)
    if problems:
        raise SuiteError(f"{path}: invalid suite: {'; '.join(problems)}")
    story_path = folder / spec.storyFile
    if folder.resolve() not in story_path.resolve().parents:
        raise SuiteError(f"{path}: storyFile {spec.storyFile!r} is outside the suite folder")
    try:
        story = story_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(f"{folder}: story file {spec.storyFile} not found") from None
    except UnicodeDecodeError:
        raise SuiteError(f"{story_path}: not UTF-8 text") from None
    except OSError as err:
        raise SuiteError(f"{story_path}: cannot read ({err.strerror})") from None
    if not story.strip():
        raise SuiteError(f"{story_path}: the story is empty")
    return Suite(folder=folder, spec=spec, story=story, story_name=story_path.name)


def _spec_problems(spec: SuiteSpec) -> list[str]:
    problems = []
    if not spec.suiteId.strip():
        problems.append("suiteId is empty")
    if not spec.questions:
        problems.append("no questions")
    seen: set[str] = set()
    for n, q in enumerate(spec.questions, 1):
        if not q.id.strip():
            problems.append(f"question {n} has an empty id")
        elif q.id in seen:
            problems.append(f"question id {q.id!r} is repeated")
        seen.add(q.id)
        if not q.input.strip():
            problems.append(f"question {q.id or n} has an empty input")
    return problems


def parse_combo(text: str | None) -> Pins:
    """`SD,KB,GS` → pins; an empty part or `-` leaves that stage to the engine."""
    if text is None:
        return Pins()
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(COMBO_STAGES):
        raise BadInput("BAD_COMBO", f"--combo takes SD,KB,GS (three plugin ids), got {text!r}")
    return Pins(
        **{stage: (p if p and p != "-" else None) for stage, p in zip(COMBO_STAGES, parts, strict=True)}
    )


# --------------------------------------------------------------------------- matching and scoring

_QUOTES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2010": "-", "\u2011": "-"}
)
_SPACE = re.compile(r"\s+")
_DASHES = re.compile(r"[\u2012\u2013\u2014\u2015]")


def normalize(text: str) -> str:
    """Lower case, straight quotes, dashes and whitespace runs as one space."""
    return _SPACE.sub(" ", _DASHES.sub(" ", text.translate(_QUOTES).lower())).strip()


def _pattern(term: str) -> re.Pattern[str]:
    words = normalize(term).split(" ")
    body = r"\s+".join(re.escape(w) for w in words)
    return re.compile(rf"(?<!\w){body}(?!\w)")


def mentions(text: str, term: str) -> bool:
    """Does `text` mention `term` as a whole word/phrase (case-insensitive)? Empty terms never match."""
    if not term.strip():
        return False
    return _pattern(term).search(normalize(text)) is not None


class Score(msgspec.Struct, kw_only=True):
    intentPass: bool
    answerPass: bool
    contextPass: bool
    recall: float
    precision: float
    f1: float
    intentMissing: list[list[str]] = []
    answerMissing: list[str] = []
    answerForbidden: list[str] = []
    contextMissing: list[str] = []
    contextForbidden: list[str] = []


def _intents_match(expected: list[ExpectedIntent], detected: list[str]) -> tuple[bool, list[list[str]]]:
    """Match expected intents to distinct detected intents (bipartite); returns (pass, unmatched terms)."""
    if not expected:
        return True, []
    fits = [[all(mentions(d, t) for t in e.intentMustMention) for d in detected] for e in expected]
    ordered = not all(e.orderIndependent for e in expected)
    if ordered:
        missing = [
            e.intentMustMention for i, e in enumerate(expected) if i >= len(detected) or not fits[i][i]
        ]
        return not missing, missing
    owner: dict[int, int] = {}  # detected index -> expected index

    def augment(e: int, seen: set[int]) -> bool:
        for d, ok in enumerate(fits[e]):
            if ok and d not in seen:
                seen.add(d)
                if d not in owner or augment(owner[d], seen):
                    owner[d] = e
                    return True
        return False

    missing = [expected[e].intentMustMention for e in range(len(expected)) if not augment(e, set())]
    return not missing, missing


def score(expected: Expected, intents: list[str], evidence: list[str], answer: str) -> Score:
    """Score one question from the detected intents' texts, the evidence texts and the answer text."""
    intent_ok, intent_missing = _intents_match(expected.intents, intents)
    context = "\n".join(evidence)
    found_need = [t for t in expected.contextMustMention if mentions(context, t)]
    found_bad = [t for t in expected.contextMustNotMention if mentions(context, t)]
    recall = len(found_need) / len(expected.contextMustMention) if expected.contextMustMention else 1.0
    precision = (
        1.0 - len(found_bad) / len(expected.contextMustNotMention) if expected.contextMustNotMention else 1.0
    )
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    answer_missing = [t for t in expected.answerMustMention if not mentions(answer, t)]
    answer_bad = [t for t in expected.answerMustNotContain if mentions(answer, t)]
    return Score(
        intentPass=intent_ok,
        answerPass=not answer_missing and not answer_bad,
        contextPass=len(found_need) == len(expected.contextMustMention) and not found_bad,
        recall=round(recall, 4),
        precision=round(precision, 4),
        f1=round(f1, 4),
        intentMissing=intent_missing,
        answerMissing=answer_missing,
        answerForbidden=answer_bad,
        contextMissing=[t for t in expected.contextMustMention if t not in found_need],
        contextForbidden=found_bad,
    )


# --------------------------------------------------------------------------- results


class QuestionResult(msgspec.Struct, kw_only=True):
    id: str
    answerPass: bool
    contextPass: bool
    f1: float
    answer: str
    plugins: dict[str, str]
    intentPass: bool = False
    recall: float = 0.0
    precision: float = 0.0
    status: str = ""
    input: str = ""
    intents: list[str] = []
    evidence: list[str] = []
    requestId: str | None = None
    durationMs: float = 0.0
    error: str | None = None
    intentMissing: list[list[str]] = []
    answerMissing: list[str] = []
    answerForbidden: list[str] = []
    contextMissing: list[str] = []
    contextForbidden: list[str] = []


class SuiteResult(msgspec.Struct, kw_only=True):
    suiteId: str
    total: int
    answerPass: int
    contextPass: int
    avgContextF1: float
    questions: list[QuestionResult]
    intentPass: int = 0
    title: str = ""
    folder: str = ""
    sessionId: str = ""
    storyUnits: int = 0
    pins: dict[str, str] = {}
    durationMs: float = 0.0
    warnings: list[str] = []


class EvalReport(msgspec.Struct, kw_only=True):
    suites: list[SuiteResult]


def _groups(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document.get("groups") or [])


def _evidence_ids(group: dict[str, Any]) -> list[str]:
    """The group's knowledge-view units; older documents without evidenceIds fall back to cited sources."""
    ids = list(group.get("evidenceIds") or [])
    if not ids:
        for key in ("currentTurnContext", "sessionSources", "kbSources"):
            ids += [ref["id"] for ref in group.get(key) or []]
    for sub in group.get("subgroups") or []:
        ids += _evidence_ids(sub)
    return list(dict.fromkeys(ids))


def _excerpts(group: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in ("currentTurnContext", "sessionSources", "kbSources"):
        for ref in group.get(key) or []:
            out.setdefault(ref["id"], ref.get("excerpt", ""))
    for sub in group.get("subgroups") or []:
        for k, v in _excerpts(sub).items():
            out.setdefault(k, v)
    return out


def unit_text(unit: KnowledgeUnit) -> str:
    """What a unit says: its title and its claim or procedure."""
    return "\n".join(p for p in (unit.title, unit.body) if p)


def evidence_texts(document: dict[str, Any], units: dict[str, KnowledgeUnit]) -> tuple[list[str], list[str]]:
    """(ids, texts) of the evidence every group of a turn used; unknown ids fall back to the excerpt."""
    ids: list[str] = []
    excerpts: dict[str, str] = {}
    for group in _groups(document):
        ids += _evidence_ids(group)
        for k, v in _excerpts(group).items():
            excerpts.setdefault(k, v)
    ids = list(dict.fromkeys(ids))
    texts = [unit_text(units[i]) if i in units else excerpts.get(i, "") for i in ids]
    return ids, texts


def answer_text(document: dict[str, Any], fallback: str = "") -> str:
    answers = [g.get("answerMarkdown", "") for g in _groups(document)]
    return "\n\n".join(a for a in answers if a) or fallback


Progress = Callable[[str], None]


async def evaluate_suite(
    ctx: KernelContext,
    suite: Suite,
    pins: Pins = Pins(),
    progress: Progress | None = None,
    deliberation_level: int | None = None,
) -> SuiteResult:
    """One fresh session, the story as session context, every question in order; never raises on a score."""
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.kernel.ingest import load_session_context

    started = time.perf_counter()
    spec = suite.spec
    session = ctx.store.create_session()
    loaded = await load_session_context(
        ctx,
        session.id,
        suite.story,
        suite.story_name,
        spec.ingestSeedDetectorPlugin or DEFAULT_INGEST_SD,
    )
    warnings = list(getattr(loaded, "warnings", []) or [])
    if progress:
        progress(f"{spec.suiteId}: story loaded ({len(loaded)} units)")
    questions: list[QuestionResult] = []
    for n, question in enumerate(spec.questions, 1):
        if progress:
            progress(f"{spec.suiteId}: question {n}/{len(spec.questions)} ({question.id})")
        t0 = time.perf_counter()
        try:
            result = await run_turn(
                ctx,
                TurnRequest(
                    message=question.input,
                    session_id=session.id,
                    pins=pins,
                    deliberation_level=deliberation_level,
                ),
            )
        except KernelError as err:  # a turn the engine refuses is a failed question, not a failed eval
            questions.append(
                _failed(question, f"{err.code}: {err.message}", (time.perf_counter() - t0) * 1000)
            )
            continue
        document = result.response_document
        units = {u.id: u for u in ctx.store.session_units(session.id)}
        ids, texts = evidence_texts(document, units)
        intents = [g.get("intent", "") for g in _groups(document)]
        answer = answer_text(document, result.response_markdown)
        s = score(question.expected, intents, texts, answer)
        questions.append(
            QuestionResult(
                id=question.id,
                input=question.input,
                answer=answer,
                status=result.status,
                plugins={k: v for k, v in (document.get("plugins") or {}).items() if v},
                intents=intents,
                evidence=ids,
                requestId=result.request_id,
                durationMs=round(result.duration_ms, 1),
                **msgspec.structs.asdict(s),
            )
        )
    total = len(questions)
    return SuiteResult(
        suiteId=spec.suiteId,
        title=spec.title,
        folder=str(suite.folder),
        sessionId=session.id,
        storyUnits=len(loaded),
        pins={k: v for k, v in msgspec.structs.asdict(pins).items() if v},
        total=total,
        answerPass=sum(q.answerPass for q in questions),
        contextPass=sum(q.contextPass for q in questions),
        intentPass=sum(q.intentPass for q in questions),
        avgContextF1=round(sum(q.f1 for q in questions) / total, 4) if total else 0.0,
        questions=questions,
        durationMs=round((time.perf_counter() - started) * 1000, 1),
        warnings=warnings,
    )


def _failed(question: EvalQuestion, error: str, duration_ms: float) -> QuestionResult:
    s = score(question.expected, [], [], "")
    fields = msgspec.structs.asdict(s)
    fields.update(answerPass=False, contextPass=False, intentPass=False, f1=0.0)
    return QuestionResult(
        id=question.id,
        input=question.input,
        answer="",
        status="error",
        plugins={},
        error=error,
        durationMs=round(duration_ms, 1),
        **fields,
    )


async def run_eval(
    folders: list[Path],
    combo: str | None = None,
    *,
    environ: dict[str, str] | None = None,
    progress: Progress | None = None,
    deliberation_level: int | None = None,
) -> EvalReport:
    """Load every suite first (a bad one fails before any work), then evaluate them one by one."""
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.engine import check_pins

    suites = [load_suite(f) for f in folders]
    pins = parse_combo(combo)
    ctx = await KernelContext.open(environ)
    try:
        check_pins(ctx, pins, prefix="--combo: ")
        for suite in suites:
            sd = suite.spec.ingestSeedDetectorPlugin
            if sd is not None:
                from mrpvm.kernel.ingest import check_sd_plugin

                check_sd_plugin(ctx, sd)
        return EvalReport(
            suites=[await evaluate_suite(ctx, s, pins, progress, deliberation_level) for s in suites]
        )
    finally:
        await ctx.aclose()


def report_json(report: EvalReport) -> str:
    return json.dumps(msgspec.to_builtins(report), indent=2, ensure_ascii=False)
