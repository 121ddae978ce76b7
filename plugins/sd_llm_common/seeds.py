"""detectSeeds with one logical LLM call (DS022): the turn's intents and its context units together.

The model writes `## Intent Group N` and `## Context Unit N` sections only. The plugin renumbers them,
gives the units their session ids (`session::<turnId>::unit-NNN`) and structural fields, prepends its
own result block and validates the whole with the protocol parser; an invalid answer gets one
corrective retry that quotes the parser's problems.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import msgspec
from mrpvm.plugins.sdk import Call, InvalidInput
from mrpvm.plugins.sdk.llm import fill, load_prompt, reply_room, reply_tokens, unsupported_without_llm
from mrpvm.plugins.sdk.model_output import ModelOutputError, parse_model_sections
from mrpvm.protocol.cnl import CnlIssue
from mrpvm.protocol.digests import sha256
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import DetectSeedsPayload

from .ask import ask_valid
from .variant import SdVariant

TURN_SOURCE_NAME = "Current-Turn Context"
MAX_HISTORY = 6
_INTENT = re.compile(r"^Intent Group\b")
_UNIT = re.compile(r"^Context Unit\b")


def _turn_id(payload: DetectSeedsPayload) -> str:
    return "-".join((payload.turnId or "turn").split())


def system_prompt(variant: SdVariant, name: str, format_name: str) -> str:
    return fill(load_prompt(variant.anchor, name), format=load_prompt(__file__, format_name))


def _user_prompt(call: Call, payload: DetectSeedsPayload, turns: int = MAX_HISTORY) -> str:
    """The user message: the turn (or the intent to decompose), with the last `turns` earlier turns, and
    nothing per-request, so an identical turn hits the LLM cache; unit ids come from `_Numbering`, never
    from the model."""
    history = ""
    recent = payload.history[-turns:] if turns > 0 else []
    if recent:
        history = "Earlier user turns, oldest first:\n" + "\n".join(f"- {h}" for h in recent) + "\n\n"
    if payload.mode == "decompose" and payload.parentIntent is not None:
        parent = payload.parentIntent
        return fill(
            load_prompt(__file__, "decompose"),
            history=history,
            act=parent.act,
            intent=parent.intent,
            output=parent.output,
            context=f"Context: {parent.context}\n" if parent.context else "",
            max_intents=max(2, payload.maxIntents),
        )
    guidance = ""
    notes = [item.text.replace("\n", " ") for item in call.request.context if item.text.strip()]
    if notes:
        guidance = "\nInstructions for reading this turn:\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    return fill(
        load_prompt(__file__, "turn"),
        history=history,
        prompt=call.prompt,
        guidance=guidance,
        max_intents=payload.maxIntents,
    )


class _Numbering:
    """Renames the model's headings: intents 1..N, units session::<turn>::unit-000.. (fresh per answer)."""

    def __init__(self, turn_id: str):
        self.source = f"session::{turn_id}"
        self.intents = 0
        self.units = 0

    def rename(self, heading: str) -> str:
        if _INTENT.match(heading):
            self.intents += 1
            return f"Intent Group {self.intents}"
        if _UNIT.match(heading):
            name = f"Context Unit {self.source}::unit-{self.units:03d}"
            self.units += 1
            return name
        return heading

    def inject(self, heading: str) -> dict[str, str]:
        if heading.startswith("Context Unit "):
            return {"SourceId": self.source, "ChunkId": f"{self.source}::chunk-000", "KUType": "atomic"}
        return {}


def parse_seeds(text: str, plugin_id: str, turn_id: str, max_intents: int) -> CnlDocument:
    numbering = _Numbering(turn_id)
    block = ["## Plugin Result", "Status: success", f"Plugin: {plugin_id}", "Confidence: medium"]
    doc = parse_model_sections(text, "detectSeeds", block, rename=numbering.rename, inject=numbering.inject)
    if not doc.intents:
        raise ModelOutputError([CnlIssue(1, "no-intents", "the answer has no '## Intent Group' section")])
    doc.intents = doc.intents[: max(1, max_intents)]
    return doc


def _finish_units(units: list[KnowledgeUnit]) -> list[KnowledgeUnit]:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    out = []
    for index, unit in enumerate(units):
        out.append(
            msgspec.structs.replace(
                unit,
                sourceName=unit.sourceName or TURN_SOURCE_NAME,
                sourceType=unit.sourceType or "turn",
                chunkIndex=0,
                unitIndex=index,
                createdAt=unit.createdAt or stamp,
                hash=unit.hash or sha256(unit.body.encode()).hexdigest()[:16],
            )
        )
    return out


def _messages(call: Call, payload: DetectSeedsPayload, variant: SdVariant) -> list[dict[str, str]]:
    """The seed prompt with as many of the last MAX_HISTORY earlier turns as leave the full reply room in
    the context window, oldest left out first (the turn itself is never cut: ask_valid refuses a turn that
    leaves no room for a reply)."""
    system = {"role": "system", "content": system_prompt(variant, "detect", "seed_format")}
    full = reply_tokens(call, variant.max_tokens)
    for turns in range(min(MAX_HISTORY, len(payload.history)), 0, -1):
        messages = [system, {"role": "user", "content": _user_prompt(call, payload, turns)}]
        if reply_room(call, messages, variant.max_tokens) >= full:
            return messages
    return [system, {"role": "user", "content": _user_prompt(call, payload, 0)}]


def detect_seeds(call: Call, variant: SdVariant) -> CnlDocument:
    if (refusal := unsupported_without_llm(call)) is not None:
        return refusal
    payload: DetectSeedsPayload = call.payload
    if not call.prompt.strip():
        raise InvalidInput("EMPTY_PROMPT", "detectSeeds needs a non-blank prompt (the user turn)")
    turn_id = _turn_id(payload)
    messages = _messages(call, payload, variant)
    doc, corrected = ask_valid(
        call,
        messages,
        lambda text: parse_seeds(text, variant.plugin_id, turn_id, payload.maxIntents),
        max_tokens=variant.max_tokens,
        what=f"{variant.plugin_id}'s seed prompt",
    )
    units = _finish_units(doc.units)
    acts = ", ".join(i.act for i in doc.intents)
    return call.reply(
        "success",
        "medium" if corrected else "high",
        result=f"{len(doc.intents)} intents, {len(units)} current-turn context units",
        evidence=f"acts: {acts}" + ("; valid after one corrective retry" if corrected else ""),
        intents=doc.intents,
        units=units,
    )
