"""Running evaluation suites (DS021): `mrpvm eval DIR...` measures answers, intents and the evidence used.

Per suite and plugin combo: ONE fresh session, the story loaded as session context
(`load_session_context` with the suite's `ingestSeedDetectorPlugin`, else sd-symbolic), then every
question asked in that session through `run_turn`, in order. Plugins are pinned only when a combo is
given (`--combo SD,KB,GS`, or each of a suite's `pluginCombos` under `--matrix`); otherwise the engine's
planners choose. Every run starts from what the planners had learned before the evaluation (isolation.py),
so a suite scores the same alone or after others.

Context is checked against the evidence actually used — the title and statement of every unit of the
knowledge view the answer was produced from (`evidenceIds` of the response groups, sub-answers
included), never the answer:
  recall    = found contextMustMention / |contextMustMention|        (1.0 when none is asked for)
  precision = 1 - found contextMustNotMention / |contextMustNotMention|  (1.0 when none is forbidden)
  f1        = 2PR / (P + R)  (0.0 when both are 0)
DS021 does not define these further; the definition is term-level because the suites name terms, not
gold units. Answer scoring, strict passes and refusals: see `scoring`.

Evaluation measures; it never fails on a low score. Bad suites raise `SuiteError` (exit 2 in the CLI).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.kernel.errors import BadInput, KernelError
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.evaluation.isolation import Learned
from mrpvm.shells.evaluation.scoring import Score, Totals, score, totals
from mrpvm.shells.evaluation.suites import (
    DEFAULT_INGEST_SD,
    ENGINE_COMBO,
    EvalQuestion,
    Suite,
    load_suite,
    parse_combo,
)

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


class QuestionResult(Score, kw_only=True):
    id: str
    answer: str
    plugins: dict[str, str]
    status: str = ""
    input: str = ""
    intents: list[str] = []
    evidence: list[str] = []
    requestId: str | None = None
    durationMs: float = 0.0
    error: str | None = None


class SuiteResult(Totals, kw_only=True):
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
    combo: str = ENGINE_COMBO
    pins: dict[str, str] = {}
    durationMs: float = 0.0
    warnings: list[str] = []


class EvalReport(msgspec.Struct, kw_only=True, omit_defaults=True):
    """`suites`: one result per suite (pinned by `--combo` if given). `matrix`, with `--matrix` only: per
    suite, one result for each of its `pluginCombos`, the engine's choice (`suites`) excluded."""

    suites: list[SuiteResult]
    matrix: list[SuiteResult] = []


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


async def run_eval(
    folders: list[Path],
    combo: str | None = None,
    *,
    matrix: bool = False,
    environ: dict[str, str] | None = None,
    progress: Progress | None = None,
    deliberation_level: int | None = None,
) -> EvalReport:
    """Load every suite first (a bad one fails before any work), then evaluate them one by one; with
    `matrix`, each suite again under each of its `pluginCombos`."""
    from mrpvm.kernel.engine import check_pins
    from mrpvm.knowledge.context import open_context
    from mrpvm.knowledge.ingest import check_sd_plugin

    if matrix and combo is not None:
        raise BadInput("BAD_COMBO", "--matrix runs each suite's pluginCombos; it cannot be used with --combo")
    suites = [load_suite(f) for f in folders]
    pins = parse_combo(combo)
    ctx = await open_context(environ)
    try:
        check_pins(ctx, pins, prefix="--combo: ")
        for suite in suites:
            if suite.spec.ingestSeedDetectorPlugin is not None:
                check_sd_plugin(ctx, suite.spec.ingestSeedDetectorPlugin)
            for plugin_combo in suite.spec.pluginCombos if matrix else []:
                check_pins(
                    ctx, plugin_combo.pins(), prefix=f"{suite.folder}: pluginCombos {plugin_combo.name()!r}: "
                )
        learned = Learned(ctx)

        async def measured(suite: Suite, pins: Pins, combo: str = ENGINE_COMBO) -> SuiteResult:
            try:
                return await evaluate_suite(
                    ctx, suite, pins, progress, combo=combo, deliberation_level=deliberation_level
                )
            finally:
                learned.restore()  # the next run starts from what the home held (isolation.py)

        try:
            results = [await measured(s, pins) for s in suites]
            runs = [
                await measured(s, c.pins(), c.name()) for s in suites if matrix for c in s.spec.pluginCombos
            ]
        finally:
            learned.discard()
        return EvalReport(suites=results, matrix=runs)
    finally:
        await ctx.aclose()


def report_json(report: EvalReport) -> str:
    return json.dumps(msgspec.to_builtins(report), indent=2, ensure_ascii=False)
