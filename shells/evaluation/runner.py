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
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.kernel.errors import BadInput, KernelError
from mrpvm.kernel.validator_records import ValidatorRecord
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.evaluation.calibration import judged_verdicts
from mrpvm.shells.evaluation.combos import enabled_environ, resolve_combo, suite_combos
from mrpvm.shells.evaluation.isolation import Learned
from mrpvm.shells.evaluation.passes import (
    LearningPass,
    in_context,
    isolated,
    main_passes,
    record_verdicts,
    scored_verdicts,
)
from mrpvm.shells.evaluation.results import QuestionResult, SuiteResult
from mrpvm.shells.evaluation.scoring import score, totals
from mrpvm.shells.evaluation.suites import (
    DEFAULT_INGEST_SD,
    ENGINE_COMBO,
    EvalQuestion,
    PluginCombo,
    Suite,
    load_suite,
)

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


class EvalReport(msgspec.Struct, kw_only=True, omit_defaults=True):
    """`suites`: one result per suite (pinned by `--combo` if given). `matrix`, with `--matrix` only: per
    suite, one result for each of its `pluginCombos` (else the standard combos, combos.py), the engine's
    choice (`suites`) excluded. With `--passes N`: `passes` holds every pass (the first is `suites`),
    `recordsBefore` what the planners held before the first; learning carries from pass to pass."""

    suites: list[SuiteResult]
    matrix: list[SuiteResult] = []
    passes: list[LearningPass] = []
    recordsBefore: dict[str, Any] = {}
    validators: dict[str, ValidatorRecord] = {}  # this evaluation's verdicts, scored (calibration.py)


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


async def run_eval(
    folders: list[Path],
    combo: str | None = None,
    *,
    matrix: bool = False,
    only: list[str] | None = None,
    passes: int = 1,
    environ: dict[str, str] | None = None,
    progress: Progress | None = None,
    deliberation_level: int | None = None,
) -> EvalReport:
    """Load every suite first (a bad one fails before any work), then evaluate them one by one; with
    `matrix`, each suite again under each of its combos (`only`: those labels). Every run starts from what
    the home held (isolation.py) — except with `passes` > 1, where the planners keep learning across the
    suites and passes (the engine's choice only), and the home is put back at the end."""
    from mrpvm.kernel.engine import check_pins
    from mrpvm.knowledge.context import open_context
    from mrpvm.knowledge.ingest import check_sd_plugin

    if matrix and combo is not None:
        raise BadInput("BAD_COMBO", "--matrix runs each suite's pluginCombos; it cannot be used with --combo")
    if passes < 1 or (passes > 1 and matrix):
        raise BadInput("BAD_PASSES", "--passes takes a count of 1 or more and cannot be used with --matrix")
    suites = [load_suite(f) for f in folders]
    main = resolve_combo(combo) or PluginCombo()
    planned = [(s, c) for s in suites if matrix for c in suite_combos(s, only)]
    base = dict(os.environ if environ is None else environ)
    ctx = await open_context(base)
    closed = False
    try:
        for c in [main, *(c for _, c in planned)]:
            check_pins(ctx, c.pins(), prefix="--combo: " if c is main else f"pluginCombos {c.name()!r}: ")
            enabled_environ(ctx, base, c.disabledPlugins)  # unknown names fail before any work
        for suite in suites:
            if suite.spec.ingestSeedDetectorPlugin is not None:
                check_sd_plugin(ctx, suite.spec.ingestSeedDetectorPlugin)
        label = main.label or ENGINE_COMBO
        report = EvalReport(suites=[])
        if main.disabledPlugins:  # the main run needs its own kernel
            await ctx.aclose()
            closed = True
            report.suites = await in_context(ctx, base, main, suites, progress, deliberation_level, label)
        else:
            learned = Learned(ctx)
            try:
                report.suites, report.passes, report.recordsBefore = await main_passes(
                    ctx, learned, suites, main, passes, progress, deliberation_level, label
                )
            finally:
                learned.discard()
        groups: dict[tuple[str, ...], list[tuple[Suite, PluginCombo]]] = {}
        for suite, c in planned:
            groups.setdefault(tuple(c.disabledPlugins), []).append((suite, c))
        for disabled, runs in groups.items():
            env = enabled_environ(ctx, base, list(disabled))
            if not closed:
                await ctx.aclose()
                closed = True
            sub = await open_context(env)
            try:
                for suite, c in runs:
                    report.matrix += await isolated(
                        sub, [suite], c.pins(), progress, deliberation_level, c.name()
                    )
            finally:
                await sub.aclose()
        everything = [*report.suites, *report.matrix, *(r for p in report.passes[1:] for r in p.suites)]
        report.validators = scored_verdicts(everything).validators
        if not report.passes:  # with passes, each pass's verdicts were recorded after it (passes.py)
            record_verdicts(ctx, everything)
        return report
    finally:
        if not closed:
            await ctx.aclose()


def report_json(report: EvalReport) -> str:
    return json.dumps(msgspec.to_builtins(report), indent=2, ensure_ascii=False)
