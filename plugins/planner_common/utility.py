"""Per-plugin utility a planner learns from `recordOutcome`, kept by the kernel in the shared store.

For each plugin the planner keeps one overall record, one per act and one per act and answer type
(`describe/number`, signals.task_kind): the finest record with samples is used, so a kb-plugin that fails
on `explain` but serves `define` well, or an LLM solver that helps on definitions but not on numbers, is
ranked per question: success rate, latency, LLM calls and sufficiency, each an exponentially weighted
moving average. Latency is recorded (the store keeps its EWMA) but never ranks: `Stat.utility`.

The planner owns the policy: `observations` scores each attempt of an outcome and names the records it
feeds (protocol/SPEC.md, `## Observation N`); the kernel folds the scores into the records (EWMA with
weight ALPHA) in the store every node shares, and hands them back in `buildPlan` (`learned`), from which
`UtilityTable.from_learned` rebuilds the table. The plugin keeps no file of its own.

The outcome signal (strict verdicts exist only in an evaluation, never at run time): whether the plugin
answered, refused or failed; for a goal solver's answer, its support (the share of the terms it adds to
the question that are found in the units it cites, measured by the kernel: a restated question scores 0)
and the validators' verdict — the kernel passes on only verdicts of validators it trusts (a rejection it
overruled, or an acceptance by a validator measured not to discriminate, arrives as `overruled`, which
counts as no verdict). A goal solver's refusal is learned only when another solver then answered the same
intent with well-supported terms (a failure: the evidence held an answer); a call the kernel skipped, or
killed when the request's deadline had cut its time, says nothing of the plugin and is not learned.
"""

from __future__ import annotations

import msgspec
from mrpvm.protocol.document import Observation
from mrpvm.protocol.envelope import LearnedStat, OutcomeAttempt, PluginStats, RecordOutcomePayload

from .signals import task_kind

ALPHA = 0.3
# A plugin measured to fail is left out of a stage that has another candidate: its overall success below
# FAILING on at least FAILING_SAMPLES outcomes, with no record of the task's act or kind (at least
# KIND_SAMPLES outcomes) at or above FAILING. Trying it after a better solver refused only turns a right
# refusal into a wrong answer (SmolLM2's gs-llm-fast on an unanswerable question).
FAILING = 0.25
FAILING_SAMPLES = 5
KIND_SAMPLES = 3
# Statuses that say nothing about the plugin's own quality: not learned from.
NEUTRAL = frozenset({"skipped", "skipped-budget"})
SUCCESS = frozenset({"success", "accepted"})
# The least support an answer needs for a validator's acceptance to count (below it: no verdict).
VOUCHED_SUPPORT = 0.5
# The support of a peer's answer that makes a goal solver's refusal of the same intent a failure.
PEER_SUPPORT = 0.8


class Stat(msgspec.Struct, kw_only=True):
    successRate: float = 0.5
    latencyMs: float = 0.0
    llmCalls: float = 0.0
    sufficiency: float = 0.5
    samples: int = 0

    def utility(self) -> float:
        """In [-1, 1]: above 0 when the plugin has served better than an unknown plugin would.

        Read from what the plugin answered (success, sufficiency) and the LLM calls it made, never from
        its measured wall time: that varies with the machine's load, and a stage's order decides which
        evidence an answer is built from, so the same questions on the same knowledge would be answered
        differently on a busy machine (docs/ARCHITECTURE.md, "Plans follow answers, not load")."""
        calls = min(1.0, self.llmCalls / 3.0)
        # the 0.15 the measured latency once weighed stays, at its neutral value for every plugin, so a
        # learned success rate counts as much as before against the declared cost and the cues
        raw = 0.55 * self.successRate + 0.2 * self.sufficiency + 0.15 * 0.5 + 0.1 * (1 - calls)
        neutral = 0.55 * 0.5 + 0.2 * 0.5 + 0.15 * 0.5 + 0.1 * 1.0
        return max(-1.0, min(1.0, (raw - neutral) / (1 - neutral)))


class PluginRecord(msgspec.Struct, kw_only=True):
    overall: Stat = msgspec.field(default_factory=Stat)
    acts: dict[str, Stat] = {}


class UtilityTable(msgspec.Struct, kw_only=True):
    plugins: dict[str, PluginRecord] = {}

    @classmethod
    def from_learned(cls, learned: list[LearnedStat]) -> UtilityTable:
        """The table the kernel's records describe (`buildPlan` `learned`)."""
        table = cls()
        for item in learned:
            record = table.plugins.setdefault(item.pluginId, PluginRecord())
            stat = Stat(
                successRate=item.successRate,
                latencyMs=item.latencyMs,
                llmCalls=item.llmCalls,
                sufficiency=item.sufficiency,
                samples=item.samples,
            )
            if item.task:
                record.acts[item.task] = stat
            else:
                record.overall = stat
        return table

    # ------------------------------------------------------------------ reading

    def utility(
        self, plugin_id: str, acts: list[str], kernel: PluginStats | None = None
    ) -> tuple[float, int]:
        """(utility in [-1, 1], samples behind it) for a plugin on a task with these acts."""
        util, samples, _ = self.evidence(plugin_id, acts, kernel)
        return util, samples

    def evidence(
        self, plugin_id: str, acts: list[str], kernel: PluginStats | None = None
    ) -> tuple[float, int, bool]:
        """(utility in [-1, 1], samples behind it, on_task): on_task is False when some act of the task
        has no record of its own while the plugin has records for other acts, so its overall record
        (or the kernel's per-plugin stats) stands in: evidence from other kinds of questions, which
        transfers only in part."""
        record = self.plugins.get(plugin_id)
        stats: list[Stat] = []
        on_task = True
        if record is not None:
            for act in acts:  # `act/type` falls back to `act` before the overall record
                stat = record.acts.get(act)
                if (stat is None or not stat.samples) and "/" in act:
                    stat = record.acts.get(act.split("/", 1)[0])
                if stat is not None and stat.samples:
                    stats.append(stat)
                else:
                    stats.append(record.overall)
                    # a plugin whose outcomes are never tied to an intent (a seed detector) has only
                    # its overall record: that is its task-level evidence, not a stand-in
                    on_task = on_task and not record.acts
            if not stats:
                stats = [record.overall]
        if (not stats or all(s.samples == 0 for s in stats)) and kernel is not None and kernel.samples:
            stats = [
                Stat(
                    successRate=kernel.successRate,
                    latencyMs=kernel.latencyMs,
                    llmCalls=kernel.llmCalls,
                    sufficiency=kernel.sufficiency,
                    samples=kernel.samples,
                )
            ]
            on_task = not acts
        stats = [s for s in stats if s.samples]
        if not stats:
            return 0.0, 0, False
        return sum(s.utility() for s in stats) / len(stats), min(s.samples for s in stats), on_task

    def failing(self, plugin_id: str, acts: list[str]) -> str | None:
        """Why the plugin is measured to fail on tasks with these act keys (None when it is not)."""
        record = self.plugins.get(plugin_id)
        if record is None:
            return None
        overall = record.overall
        if overall.samples < FAILING_SAMPLES or overall.successRate >= FAILING:
            return None
        keys = {k for act in acts for k in (act, act.split("/", 1)[0])}
        if any(
            (s := record.acts.get(k)) is not None and s.samples >= KIND_SAMPLES and s.successRate >= FAILING
            for k in keys
        ):
            return None
        return f"{plugin_id} success {overall.successRate:.2f} on {overall.samples}"


def observations(payload: RecordOutcomePayload) -> list[Observation]:
    """What to learn from every attempt of an outcome: for each, its score for the plugin's overall
    record, for the act of its intent and for the act and answer type (the kernel folds them in)."""
    acts = {i.ref: (i.act, task_kind(i)) for i in payload.intents}
    verdicts = validation_verdicts(payload.attempts)
    refuted = refuted_refusals(payload.attempts)
    out: list[Observation] = []
    for n, attempt in enumerate(payload.attempts):
        refusal = attempt.type == "gs-plugin" and attempt.status == "no-context"
        if attempt.status in NEUTRAL or (refusal and n not in refuted):
            # a goal solver's no-context is a verdict on the evidence, not on the solver: learning it
            # as a failure would rank an honest solver below one that answers anything
            continue
        success, sufficient = (0.0, None) if refusal else score_attempt(attempt, verdicts.get(n))
        act, kind = acts.get(attempt.intentRef or "", ("", ""))
        tasks = [""] + ([act] if act else []) + ([kind] if kind and kind != act else [])
        for task in tasks:
            out.append(
                Observation(
                    index=len(out) + 1,
                    plugin=attempt.pluginId,
                    task=task,
                    success=success,
                    latencyMs=max(0.0, attempt.durationMs),
                    llmCalls=float(max(0, attempt.llmCalls)),
                    sufficiency=sufficient,
                    alpha=ALPHA,
                )
            )
    return out


def refuted_refusals(attempts: list[OutcomeAttempt]) -> set[int]:
    """Indexes of goal-solver refusals (no-context) after which another goal solver answered the same
    intent in the same frame with support of at least PEER_SUPPORT: the evidence held an answer the
    refusing solver did not give, so its refusal is learned as a failure (else it is not learned)."""
    refused: dict[tuple[str | None, str | None], list[int]] = {}
    out: set[int] = set()
    for n, attempt in enumerate(attempts):
        if attempt.type != "gs-plugin":
            continue
        key = (attempt.frameId, attempt.intentRef)
        if attempt.status == "no-context":
            refused.setdefault(key, []).append(n)
        elif attempt.status in SUCCESS and (attempt.support or 0.0) >= PEER_SUPPORT:
            out.update(i for i in refused.pop(key, []) if attempts[i].pluginId != attempt.pluginId)
    return out


def validation_verdicts(attempts: list[OutcomeAttempt]) -> dict[int, str]:
    """Index of each successful goal-solver attempt -> the verdict of the validators that judged it
    (`accepted`/`rejected`); validators run right after the answer they judge, for the same intent."""
    verdicts: dict[int, str] = {}
    last: dict[tuple[str | None, str | None], int] = {}
    for n, attempt in enumerate(attempts):
        key = (attempt.frameId, attempt.intentRef)
        if attempt.type == "gs-plugin":
            if attempt.status in SUCCESS:
                last[key] = n
            else:
                last.pop(key, None)
        elif (
            attempt.type == "val-plugin"
            and key in last
            and attempt.status in ("accepted", "rejected")
            and verdicts.get(last[key]) != "rejected"  # one rejection stands
        ):
            verdicts[last[key]] = attempt.status
    return verdicts


def score_attempt(attempt: OutcomeAttempt, verdict: str | None = None) -> tuple[float, float | None]:
    """(success in [0, 1], sufficiency or None) of one attempt, by what its plugin type was asked.

    A goal solver's answer: the validators' verdict (accepted 1, rejected 0, none 0.5) averaged with its
    evidence support when the kernel measured one (an acceptance of an answer with support below
    VOUCHED_SUPPORT counts as no verdict: what the evidence does not hold, no validator vouches for). An unvalidated, unmeasured answer is neutral, 0.5: it
    shows the solver answered, not that it was right, and learning it as a success would promote
    whichever solver answers most readily; support tells an answer that says what its units say from one
    that does not."""
    status = attempt.status
    if attempt.type == "gs-plugin" and status in SUCCESS:
        sufficient = None if attempt.sufficient is None else (1.0 if attempt.sufficient else 0.0)
        judged = {"accepted": 1.0, "rejected": 0.0}.get(verdict or "", 0.5)
        if attempt.support is None:
            return judged, sufficient
        if judged > 0.5 and attempt.support < VOUCHED_SUPPORT:  # no validator vouches for unsupported terms
            judged = 0.5
        return 0.5 * judged + 0.5 * attempt.support, sufficient
    sufficient = None if attempt.sufficient is None else (1.0 if attempt.sufficient else 0.0)
    if attempt.type == "val-plugin":  # a verdict either way is the validator doing its job
        return (1.0 if status in ("accepted", "rejected") else 0.0), None
    if attempt.type == "kb-plugin":
        if status == "success":
            return (1.0 if attempt.sufficient is not False else 0.6), sufficient
        if status == "insufficient":
            return 0.4, 0.0
        return 0.0, sufficient
    if status in SUCCESS:
        return 1.0, sufficient
    if status in ("needs-decomposition", "insufficient"):
        return 0.4, sufficient
    if status == "no-context":
        return 0.2, sufficient
    return 0.0, sufficient  # error, unsupported, rejected
