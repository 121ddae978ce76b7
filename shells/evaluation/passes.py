"""How `mrpvm eval` runs suites against one kernel: isolated (every suite from what the home held), in a
kernel with plugins switched off, or in learning passes (`--passes N`); and the validator verdicts an
evaluation measured, added to the home's records (kernel/validator_records.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.kernel.validator_records import ValidatorRecords, add_measured
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.evaluation.calibration import measured
from mrpvm.shells.evaluation.combos import enabled_environ
from mrpvm.shells.evaluation.isolation import Learned, planner_records
from mrpvm.shells.evaluation.results import SuiteResult
from mrpvm.shells.evaluation.suite_run import Progress, evaluate_suite
from mrpvm.shells.evaluation.suites import PluginCombo, Suite

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


class LearningPass(msgspec.Struct, kw_only=True):
    """One pass over the suites with `--passes N`: its results and what the planners held after it."""

    number: int
    suites: list[SuiteResult]
    recordsAfter: dict[str, Any]


def scored_verdicts(results: list[SuiteResult]) -> ValidatorRecords:
    return measured([v for r in results for q in r.questions for v in q.verdicts])


def record_verdicts(ctx: KernelContext, results: list[SuiteResult]) -> None:
    """Add the verdicts the runs measured to the home's validator records; the kernel re-reads them."""
    scored = scored_verdicts(results)
    if scored.validators:
        add_measured(ctx.home, scored)
        ctx.validator_records = None


async def isolated(
    ctx: KernelContext,
    suites: list[Suite],
    pins: Pins,
    progress: Progress | None,
    deliberation_level: int | None,
    label: str,
) -> list[SuiteResult]:
    """Each suite from what the home held: the planners' learning is put back after every one."""
    learned = Learned(ctx)
    out = []
    try:
        for suite in suites:
            try:
                out.append(await evaluate_suite(ctx, suite, pins, progress, label, deliberation_level))
            finally:
                learned.restore()
    finally:
        learned.discard()
    return out


async def in_context(
    old: KernelContext,
    base: dict[str, str],
    combo: PluginCombo,
    suites: list[Suite],
    progress: Progress | None,
    deliberation_level: int | None,
    label: str,
) -> list[SuiteResult]:
    from mrpvm.knowledge.context import open_context

    ctx = await open_context(enabled_environ(old, base, combo.disabledPlugins))
    try:
        return await isolated(ctx, suites, combo.pins(), progress, deliberation_level, label)
    finally:
        await ctx.aclose()


async def main_passes(
    ctx: KernelContext,
    learned: Learned,
    suites: list[Suite],
    combo: PluginCombo,
    passes: int,
    progress: Progress | None,
    deliberation_level: int | None,
    label: str,
) -> tuple[list[SuiteResult], list[LearningPass], dict[str, Any]]:
    """(first pass, every pass when more than one, the records before the first). Learning carries
    across suites and passes: the planners' EWMA (from run-time outcomes only) and, after each pass, the
    validators' precision measured on that pass (calibration.py)."""
    if passes == 1:
        return await isolated(ctx, suites, combo.pins(), progress, deliberation_level, label), [], {}
    before = planner_records(ctx)
    out: list[LearningPass] = []
    try:
        for number in range(1, passes + 1):
            results = [
                await evaluate_suite(
                    ctx, s, combo.pins(), progress, f"{label} pass {number}", deliberation_level
                )
                for s in suites
            ]
            record_verdicts(ctx, results)  # the validators' measured precision applies from the next pass
            out.append(LearningPass(number=number, suites=results, recordsAfter=planner_records(ctx)))
    finally:
        learned.restore()
    return out[0].suites, out, before
