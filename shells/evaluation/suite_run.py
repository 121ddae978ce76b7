"""One suite run (DS021): a fresh session, the story loaded as session context, every question asked in
order and scored against the evidence the answer used (the definitions: runner.py). Entry: `evaluate_suite`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.kernel.errors import KernelError
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.evaluation.calibration import judged_verdicts
from mrpvm.shells.evaluation.results import QuestionResult, SuiteResult
from mrpvm.shells.evaluation.scoring import score, totals
from mrpvm.shells.evaluation.suites import DEFAULT_INGEST_SD, ENGINE_COMBO, EvalQuestion, Suite

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

Progress = Callable[[str], None]


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


async def evaluate_suite(
    ctx: KernelContext,
    suite: Suite,
    pins: Pins = Pins(),
    progress: Progress | None = None,
    combo: str = ENGINE_COMBO,
    deliberation_level: int | None = None,
) -> SuiteResult:
    """One fresh session, the story as session context, every question in order; never raises on a score."""
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.knowledge.ingest import load_session_context

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
        progress(f"{spec.suiteId} [{combo}]: story loaded ({len(loaded)} units)")
    questions: list[QuestionResult] = []
    for n, question in enumerate(spec.questions, 1):
        if progress:
            progress(f"{spec.suiteId} [{combo}]: question {n}/{len(spec.questions)} ({question.id})")
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
                llmCalls=result.llm_calls,
                verdicts=judged_verdicts(result.execution_trace, question.expected),
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
        combo=combo,
        pins={k: v for k, v in msgspec.structs.asdict(pins).items() if v},
        total=total,
        answerPass=sum(q.answerPass for q in questions),
        contextPass=sum(q.contextPass for q in questions),
        intentPass=sum(q.intentPass for q in questions),
        avgContextF1=round(sum(q.f1 for q in questions) / total, 4) if total else 0.0,
        questions=questions,
        durationMs=round((time.perf_counter() - started) * 1000, 1),
        llmCalls=sum(q.llmCalls for q in questions),
        secondsPerTurn=round(sum(q.durationMs for q in questions) / total / 1000, 2) if total else 0.0,
        warnings=warnings,
        **msgspec.structs.asdict(totals(questions)),
    )


def _failed(question: EvalQuestion, error: str, duration_ms: float) -> QuestionResult:
    s = score(question.expected, [], [], "")
    fields = msgspec.structs.asdict(s)
    fields.update(answerPass=False, answerStrictPass=False, contextPass=False, intentPass=False, f1=0.0)
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
