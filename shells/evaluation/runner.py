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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.kernel.errors import BadInput
from mrpvm.kernel.validator_records import ValidatorRecord
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
from mrpvm.shells.evaluation.results import SuiteResult
from mrpvm.shells.evaluation.suite_run import Progress
from mrpvm.shells.evaluation.suites import (
    ENGINE_COMBO,
    PluginCombo,
    Suite,
    load_suite,
)

if TYPE_CHECKING:
    pass


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
    from mrpvm.knowledge.normalize import check_sd_plugin

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
