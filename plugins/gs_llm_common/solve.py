"""solve: a grounded answer from one intent and its evidence (DS016 {prompt, context} shape).

No LLM (`llm: null`) → `unsupported` at once. No evidence → `no-context` with the protocol's exact
sentence, without calling the LLM. Otherwise the model answers in `## Answer` / `## Sources` form, or
says `NO-CONTEXT`, or (when the request allows it) `NEEDS-DECOMPOSITION: <why>`. Cited ids are kept
only if they name evidence or guidance units, and an answer citing none is an error (UNGROUNDED_ANSWER):
the kernel falls back to the next solver. Guidance units are given to the model as output instructions.
The deep variant drafts, then refines the draft against the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mrpvm.plugins.sdk import Call, Plugin, PluginFailure
from mrpvm.plugins.sdk.llm import calls_left, chat, fill, format_units, load_prompt, unsupported_without_llm
from mrpvm.plugins.sdk.model_output import ModelOutputError, parse_model_sections
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import SolvePayload
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

NO_CONTEXT = re.compile(r"^\W*NO[-_ ]CONTEXT\b", re.IGNORECASE)
NEEDS_DECOMPOSITION = re.compile(r"^\W*NEEDS[-_ ]DECOMPOSITION\b\W*(.*)", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"^## +(.*?)\s*$")
_KNOWN = ("Answer", "Sources")
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


@dataclass(slots=True)
class Draft:
    status: str  # success | no-context | needs-decomposition
    answer: str = ""
    sources: list[str] | None = None
    dropped: int = 0  # cited ids that name no evidence unit
    reason: str = ""


def make_plugin(variant: GsVariant) -> Plugin:
    return Plugin(variant.plugin_id, "gs-plugin", {"solve": lambda call: solve(call, variant)})


def _intent(call: Call, payload: SolvePayload) -> IntentGroup:
    return payload.intent or IntentGroup(act="describe", intent=call.prompt, output="an answer")


def _question(intent: IntentGroup, evidence: list[KnowledgeUnit], guidance: list[KnowledgeUnit]) -> str:
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
        evidence=format_units(evidence),
    )


def _system(variant: GsVariant, name: str, allow_decompose: bool) -> str:
    rule = DECOMPOSE_RULE if allow_decompose else ""
    return fill(
        load_prompt(variant.anchor, name),
        format=fill(load_prompt(__file__, "answer_format"), decompose_rule=rule),
    )


def read_answer(text: str, plugin_id: str, known_ids: set[str], allow_decompose: bool) -> Draft:
    """The model's answer as a Draft. Lenient about wrapping (missing heading, stray ## headings)."""
    stripped = text.strip()
    if NO_CONTEXT.match(stripped):
        return Draft("no-context", NO_CONTEXT_ANSWER, [])
    match = NEEDS_DECOMPOSITION.match(stripped)
    if match:
        if allow_decompose:
            return Draft("needs-decomposition", reason=" ".join(match.group(1).split())[:300])
        raise PluginFailure(
            "INVALID_MODEL_OUTPUT", "the model asked for decomposition, which this request does not allow"
        )
    lines = stripped.split("\n")
    if lines and lines[0].strip().startswith("```") and lines[-1].strip() == "```":
        lines = lines[1:-1]
    if not any(_HEADING.match(line) and _HEADING.match(line).group(1) == "Answer" for line in lines):
        lines = ["## Answer", *lines]
    fixed = []
    for line in lines:
        heading = _HEADING.match(line)
        if heading and heading.group(1) not in _KNOWN and not heading.group(1).startswith("Plugin Result"):
            line = "#" + line  # a level-2 heading inside the answer becomes level 3
        fixed.append(line)
    block = ["## Plugin Result", "Status: success", f"Plugin: {plugin_id}", "Confidence: medium"]
    try:
        doc = parse_model_sections("\n".join(fixed), "solve", block)
        answer, cited = (doc.answer or "").strip(), list(doc.sources or [])
    except ModelOutputError:
        answer, cited = _loose_answer(fixed), []
    if not answer:
        raise PluginFailure("INVALID_MODEL_OUTPUT", "the model's answer is empty")
    if not cited:  # no Sources line: take the evidence ids the answer mentions
        cited = sorted((i for i in known_ids if i in answer), key=answer.index)
    kept = [i for i in dict.fromkeys(cited) if i in known_ids]
    if not kept:  # an answer that rests on no evidence unit is not grounded: let the kernel fall back
        raise PluginFailure(
            "UNGROUNDED_ANSWER",
            f"the model's answer cites no evidence unit: {' '.join(answer.split())[:160]!r}",
            {"cited": list(dict.fromkeys(cited))[:12]},
        )
    return Draft("success", answer, kept, dropped=len(set(cited)) - len(kept))


def _loose_answer(lines: list[str]) -> str:
    """Everything between `## Answer` and `## Sources` (or the end), when the strict parse failed."""
    out, inside = [], False
    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            inside = heading.group(1) == "Answer"
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()


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
    confidence = "medium" if draft.dropped else "high"
    evidence = f"cites {len(sources)} evidence unit(s)"
    if draft.dropped:
        evidence += f"; {draft.dropped} cited id(s) named no evidence unit and were dropped"
    return call.reply(
        "success",
        confidence,
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
    known = evidence_ids | {u.id for u in guidance}
    intent = _intent(call, payload)
    question = _question(intent, evidence, guidance)
    first = "draft" if variant.deep else "answer"
    messages = [
        {"role": "system", "content": _system(variant, first, payload.allowDecompose)},
        {"role": "user", "content": question},
    ]
    text = chat(call, messages, max_tokens=variant.max_tokens)
    draft = read_answer(text, variant.plugin_id, known, payload.allowDecompose)
    if not variant.deep or draft.status != "success":
        return _reply(call, draft)
    if calls_left(call) < 1:
        return _reply(call, draft, "draft only: no LLM call left for the refine pass")
    refine = fill(load_prompt(variant.anchor, "refine"), draft=text.strip())
    messages = [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": refine}]
    try:
        refined = read_answer(
            chat(call, messages, max_tokens=variant.max_tokens), variant.plugin_id, known, False
        )
    except PluginFailure as failure:
        if failure.code == "TIMEOUT":
            raise
        return _reply(call, draft, f"draft only: the refine pass failed ({failure.code})")
    if refined.status != "success":
        return _reply(call, draft, "draft only: the refine pass found no answer")
    return _reply(call, refined, "drafted and refined")
