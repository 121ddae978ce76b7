"""solve: a grounded answer from one intent and its evidence (DS016 {prompt, context} shape).

No LLM (`llm: null`) → `unsupported` at once. No evidence → `no-context` with the protocol's exact
sentence, without calling the LLM. The evidence is budgeted to the model's context window
(`llm.contextTokens`): whole units in order while they fit, never one cut mid-unit; only the units
actually given can be cited. Otherwise the model answers in `## Answer` / `## Sources` form, or says
`NO-CONTEXT`, or (when the request allows it) `NEEDS-DECOMPOSITION: <why>`.

Units are shown as `[E1]`, `[E2]` ... (a small model copies short labels, not `src::chunk-003::unit-012`);
cited labels or ids are mapped back to the units given. When the model names no source, the plugin
attributes the answer itself: the given units that hold its terms, if they hold at least ATTRIBUTION_MIN
of them (the result says the sources were attributed). A completion that cannot be a grounded answer
is a structured error with the reason (the kernel then falls back to the next solver): empty or cut at
max_tokens (INVALID_MODEL_OUTPUT), citing any label or id that was not given, or naming none while its
terms are not in the evidence (UNGROUNDED_ANSWER: a made-up source is never passed on, and an answer
resting on one is not trusted). Guidance units are given to the model as output instructions. The deep
variant drafts, then refines the draft against the evidence in the same conversation: the draft call
gets the whole evidence budget, and the refine call, grown by the draft and its instructions, shows the
units the draft cites and as many others as still fit, under the same labels (the draft alone is the
answer when even the cited units no longer fit).
"""

from __future__ import annotations

from dataclasses import dataclass

from mrpvm.plugins.sdk import Call, Plugin, PluginFailure
from mrpvm.plugins.sdk.llm import (
    calls_left,
    complete,
    estimate_tokens,
    evidence_label,
    evidence_tokens,
    fill,
    fit_units,
    load_prompt,
    reply_tokens,
    unit_line,
    unsupported_without_llm,
)
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import SolvePayload
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

from .reading import PROMPT_MARKERS, Draft, criterion_marker, evidence_markers, read_answer

DECOMPOSE_RULE = (
    "\nIf the question is too broad for one answer and should be split into smaller questions, write only\n"
    "this line instead:\nNEEDS-DECOMPOSITION: <one sentence saying why>\n"
)


@dataclass(frozen=True, slots=True)
class GsVariant:
    plugin_id: str
    anchor: str  # the plugin module's __file__ (prompts/ beside it)
    deep: bool = False
    max_tokens: int = 1200


def make_plugin(variant: GsVariant) -> Plugin:
    return Plugin(variant.plugin_id, "gs-plugin", {"solve": lambda call: solve(call, variant)})


def _intent(call: Call, payload: SolvePayload) -> IntentGroup:
    return payload.intent or IntentGroup(act="describe", intent=call.prompt, output="an answer")


def _question(intent: IntentGroup, evidence: str, guidance: list[KnowledgeUnit]) -> str:
    """The user message; `evidence` is the budgeted unit lines (fit_units)."""
    instructions = ""
    if guidance:
        rules = "\n".join(f"- [{u.id}] {' '.join(u.body.split())}" for u in guidance)
        instructions = (
            f"Instructions and notes from the user that apply to the answer (follow them):\n{rules}\n"
        )
    return fill(
        load_prompt(__file__, "question"),
        act=intent.act,
        intent=intent.intent,
        output=intent.output,
        criterion=f"A good answer: {intent.criterion}\n" if intent.criterion else "",
        context=f"Context: {intent.context}\n" if intent.context else "",
        instructions=instructions,
        evidence=evidence,
    )


def _system(variant: GsVariant, name: str, allow_decompose: bool) -> str:
    rule = DECOMPOSE_RULE if allow_decompose else ""
    return fill(
        load_prompt(variant.anchor, name),
        format=fill(load_prompt(__file__, "answer_format"), decompose_rule=rule),
    )


def _reply(call: Call, draft: Draft, note: str = "") -> CnlDocument:
    if draft.status == "no-context":
        return call.reply(
            "no-context",
            result="the model found no answer in the evidence",
            answer=NO_CONTEXT_ANSWER,
            sources=[],
        )
    if draft.status == "needs-decomposition":
        return call.reply(
            "needs-decomposition",
            result=draft.reason or "the model judged the intent too broad for one answer",
        )
    sources = draft.sources or []
    evidence = f"cites {len(sources)} of the evidence unit(s) it was given"
    if draft.attributed:
        evidence += " (attributed by the plugin: the model named none)"
    return call.reply(
        "success",
        "medium" if draft.attributed else "high",
        result=f"grounded answer from {len(sources)} cited unit(s)" + (f"; {note}" if note else ""),
        evidence=evidence,
        answer=draft.answer,
        sources=sources,
    )


def solve(call: Call, variant: GsVariant) -> CnlDocument:
    if (refusal := unsupported_without_llm(call)) is not None:
        return refusal
    payload: SolvePayload = call.payload
    evidence = list(payload.evidence) or call.context_units()
    if not evidence:
        return call.reply("no-context", result="no evidence was given", answer=NO_CONTEXT_ANSWER, sources=[])
    evidence_ids = {u.id for u in evidence}
    guidance = [u for u in {u.id: u for u in payload.guidance}.values() if u.id not in evidence_ids]
    intent = _intent(call, payload)
    first = "draft" if variant.deep else "answer"
    system = _system(variant, first, payload.allowDecompose)
    reply = reply_tokens(call, variant.max_tokens)
    budget = evidence_tokens(call, [system, _question(intent, "", guidance)], reply)
    lines, given = fit_units(evidence, budget, labels=True)
    if not given:
        raise PluginFailure(
            "CONTEXT_WINDOW_TOO_SMALL",
            f"no evidence unit fits the model's context window (about {budget} tokens left for evidence)",
            {"reason": "context-window", "evidenceUnits": len(evidence)},
        )
    labels = {u.id: evidence_label(n) for n, u in enumerate(given)}
    known = {label: uid for uid, label in labels.items()} | {u.id: u.id for u in [*given, *guidance]}
    texts = {u.id: f"{u.title or ''} {u.topic or ''} {u.body}" for u in given}
    markers = (*PROMPT_MARKERS, *evidence_markers(given), *criterion_marker(intent))
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": _question(intent, lines, guidance)},
    ]
    note = (
        f"{len(evidence) - len(given)} unit(s) left out to fit the context window"
        if len(given) < len(evidence)
        else ""
    )
    first_reply = complete(call, messages, max_tokens=reply)
    draft = read_answer(
        first_reply.text,
        variant.plugin_id,
        known,
        payload.allowDecompose,
        first_reply.truncated,
        texts,
        markers,
        intent.intent,
    )
    if not variant.deep or draft.status != "success":
        return _reply(call, draft, note)
    if calls_left(call) < 1:
        return _reply(call, draft, _join(note, "draft only: no LLM call left for the refine pass"))
    refine = load_prompt(variant.anchor, "refine")
    turn = [{"role": "assistant", "content": first_reply.text}, {"role": "user", "content": refine}]
    fixed = [system, _question(intent, "", guidance), first_reply.text, refine]
    shown_lines, shown = _refine_evidence(
        given, draft.sources or [], labels, evidence_tokens(call, fixed, reply, 4)
    )
    if not shown:
        return _reply(call, draft, _join(note, "draft only: the refine pass does not fit the context window"))
    shown_ids = {u.id for u in shown}
    messages = [messages[0], {"role": "user", "content": _question(intent, shown_lines, guidance)}, *turn]
    refine_known = {k: v for k, v in known.items() if v in shown_ids or v not in texts}
    try:
        second = complete(call, messages, max_tokens=reply)
        refined = read_answer(
            second.text,
            variant.plugin_id,
            refine_known,
            False,
            second.truncated,
            {uid: text for uid, text in texts.items() if uid in shown_ids},
            markers,
            intent.intent,
        )
    except PluginFailure as failure:
        if failure.code == "TIMEOUT":
            raise
        return _reply(call, draft, _join(note, f"draft only: the refine pass failed ({failure.code})"))
    if refined.status != "success":
        return _reply(call, draft, _join(note, "draft only: the refine pass found no answer"))
    return _reply(call, refined, _join(note, "drafted and refined"))


def _refine_evidence(
    given: list[KnowledgeUnit], cited: list[str], labels: dict[str, str], budget: int
) -> tuple[str, list[KnowledgeUnit]]:
    """The evidence the refine pass shows, within `budget` tokens: every unit the draft cites (else
    nothing: the draft cannot be checked), then the other units given while they fit, in the draft's
    order and under the draft's labels (so `[E3]` in the draft still names the same unit)."""
    cited_units = [u for u in given if u.id in set(cited)]
    lines, shown = fit_units(cited_units, budget, labels=labels)
    if len(shown) < len(cited_units):
        return "", []
    rest = [u for u in given if u.id not in set(cited)]
    spare = budget - sum(estimate_tokens(unit_line(u, labels[u.id])) + 1 for u in shown)
    _, more = fit_units(rest, spare, labels=labels)
    chosen = {u.id for u in [*shown, *more]}
    return fit_units([u for u in given if u.id in chosen], budget, labels=labels)


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
