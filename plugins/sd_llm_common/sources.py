"""normalizePersistentContext with the kb-ingest role: a source text becomes a KU tree, one LLM call per part.

The text is cut at paragraph (then line, then word) boundaries into parts that fit the model's context
(`MRPVM_LLM_CONTEXT_CHARS`, default 6000 characters of source per call). For each part the model writes
a summary unit and the part's atomic units; the plugin builds the tree: atomic units
`<sourceId>::chunk-NNN::unit-NNN` under one composite per part (`<sourceId>::section-NNN`, the model's
summary) under the source aggregate (`<sourceId>::source-summary`).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

import msgspec
from mrpvm.plugins.sdk import Call, InvalidInput, PluginFailure
from mrpvm.plugins.sdk.llm import (
    calls_left,
    estimate_tokens,
    evidence_tokens,
    fill,
    load_prompt,
    reply_tokens,
    unsupported_without_llm,
)
from mrpvm.plugins.sdk.model_output import ModelOutputError, parse_model_sections
from mrpvm.protocol.cnl import CnlIssue
from mrpvm.protocol.digests import sha256
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import NormalizePayload

from .ask import ask_valid
from .seeds import system_prompt
from .variant import SdVariant

DEFAULT_CONTEXT_CHARS = 6000
MIN_CONTEXT_CHARS = 500
CHARS_PER_TOKEN = 3  # a first cut of the text by characters; split_fitting checks each part's tokens
MAX_SUMMARY_CHARS = 2000
_UNIT = re.compile(r"^Context Unit\b")
_SUMMARY_KEY = "summary"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def context_chars() -> int:
    raw = os.environ.get("MRPVM_LLM_CONTEXT_CHARS", "")
    try:
        return max(MIN_CONTEXT_CHARS, int(raw)) if raw.strip() else DEFAULT_CONTEXT_CHARS
    except ValueError:
        return DEFAULT_CONTEXT_CHARS


def split_parts(text: str, limit: int) -> list[tuple[int, int]]:
    """Spans of at most `limit` characters that tile the text, cut at the best boundary available."""
    spans: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while start < n:
        end = min(n, start + limit)
        if end < n:
            window = text[start:end]
            cut = -1
            for sep in ("\n\n", "\n", ". ", " "):
                pos = window.rfind(sep)
                if pos > limit // 4:
                    cut = pos + len(sep)
                    break
            if cut > 0:
                end = start + cut
        spans.append((start, end))
        start = end
    return [(a, b) for a, b in spans if text[a:b].strip()]


def split_fitting(text: str, limit: int, max_tokens: int) -> list[tuple[int, int]]:
    """split_parts, then each part whose estimated tokens exceed `max_tokens` split again in proportion
    (dense text: numbers, options, upper case), down to MIN_CONTEXT_CHARS."""
    spans: list[tuple[int, int]] = []
    for start, end in split_parts(text, limit):
        tokens = estimate_tokens(text[start:end])
        if tokens <= max_tokens or end - start <= MIN_CONTEXT_CHARS:
            spans.append((start, end))
            continue
        smaller = max(MIN_CONTEXT_CHARS, (end - start) * max_tokens // tokens)
        spans.extend((start + a, start + b) for a, b in split_fitting(text[start:end], smaller, max_tokens))
    return spans


class _PartNumbering:
    def __init__(self, source_id: str, part: int):
        self.chunk = f"{source_id}::chunk-{part:03d}"
        self.section = f"{source_id}::section-{part:03d}"
        self.source_id = source_id
        self.units = 0

    def rename(self, heading: str) -> str:
        if not _UNIT.match(heading):
            return heading
        key = heading[len("Context Unit") :].strip().lower()
        if key == _SUMMARY_KEY:
            return f"Context Unit {self.section}"
        name = f"Context Unit {self.chunk}::unit-{self.units:03d}"
        self.units += 1
        return name

    def inject(self, heading: str) -> dict[str, str]:
        if not heading.startswith("Context Unit "):
            return {}
        summary = heading.endswith(self.section)
        return {
            "SourceId": self.source_id,
            "ChunkId": self.chunk,
            "KUType": "composite" if summary else "atomic",
        }


def _parse_part(text: str, plugin_id: str, source_id: str, part: int) -> CnlDocument:
    numbering = _PartNumbering(source_id, part)
    block = ["## Plugin Result", "Status: success", f"Plugin: {plugin_id}", "Confidence: medium"]
    doc = parse_model_sections(
        text, "normalizePersistentContext", block, rename=numbering.rename, inject=numbering.inject
    )
    if not any(u.kuType == "atomic" for u in doc.units):
        raise ModelOutputError(
            [CnlIssue(1, "no-units", "the answer has no numbered '## Context Unit' section")]
        )
    return doc


def normalize_source(call: Call, variant: SdVariant) -> CnlDocument:
    if (refusal := unsupported_without_llm(call)) is not None:
        return refusal
    payload: NormalizePayload = call.payload
    text = payload.text or call.prompt
    if not text.strip():
        raise InvalidInput(
            "EMPTY_SOURCE", "normalizePersistentContext needs non-blank text (payload.text or prompt)"
        )
    source_name = payload.sourceName or payload.sourceId or "source"
    source_id = _SAFE.sub("-", payload.sourceId or source_name).strip("-") or "source"
    system = system_prompt(variant, "normalize", "units_format")
    template = fill(load_prompt(__file__, "source"), source_name=source_name, part=1, parts=1, text="")
    reply = reply_tokens(call, variant.source_max_tokens)
    window = evidence_tokens(call, [system, template], reply)
    part_chars = max(MIN_CONTEXT_CHARS, min(context_chars(), window * CHARS_PER_TOKEN))
    spans = split_fitting(text, part_chars, window)
    if len(spans) > calls_left(call):
        raise PluginFailure(
            "LLM_BUDGET_TOO_SMALL",
            f"the text needs {len(spans)} LLM calls (one per {part_chars} characters) but this call may make "
            f"{calls_left(call)}; send smaller parts or raise the call budget",
            {"parts": len(spans), "callsLeft": calls_left(call)},
        )
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    aggregate_id = f"{source_id}::source-summary"
    units: list[KnowledgeUnit] = []
    sections: list[KnowledgeUnit] = []
    corrections = 0
    for part, (start, end) in enumerate(spans):
        user = fill(
            load_prompt(__file__, "source"),
            source_name=source_name,
            part=part + 1,
            parts=len(spans),
            text=text[start:end],
        )
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        # A corrective retry only when it cannot starve a later part of its call.
        spare = calls_left(call) - (len(spans) - part)
        doc, corrected = ask_valid(
            call,
            messages,
            lambda answer, part=part: _parse_part(answer, variant.plugin_id, source_id, part),
            max_tokens=variant.source_max_tokens,
            retry=spare >= 1,
        )
        corrections += corrected
        section, leaves = _part_tree(
            doc.units, part, source_id, aggregate_id, start + payload.charOffset, end + payload.charOffset
        )
        sections.append(section)
        units.extend([section, *leaves])
    summary = " ".join(s.body for s in sections)[:MAX_SUMMARY_CHARS]
    aggregate = KnowledgeUnit(
        id=aggregate_id,
        sourceId=source_id,
        chunkId=f"{source_id}::chunk-000",
        kuType="aggregate",
        role="Description",
        topic=source_name,
        claim=summary or source_name,
        childUnitIds=[s.id for s in sections],
        charStart=payload.charOffset,
        charEnd=payload.charOffset + len(text),
    )
    common = {
        "sourceName": source_name,
        "sourceType": payload.sourceType or "text",
        "author": payload.author,
        "knowledgeDate": payload.knowledgeDate,
        "createdAt": stamp,
    }
    tree = [
        msgspec.structs.replace(u, hash=u.hash or sha256(u.body.encode()).hexdigest()[:16], **common)
        for u in [aggregate, *units]
    ]
    atomic = sum(1 for u in tree if u.kuType == "atomic")
    return call.reply(
        "success",
        "medium" if corrections else "high",
        result=f"{len(tree)} KUs from {source_id}: {atomic} atomic, {len(sections)} composite, 1 aggregate",
        evidence=f"{len(spans)} part(s) of at most {context_chars()} characters"
        + (f"; {corrections} corrective retr{'y' if corrections == 1 else 'ies'}" if corrections else ""),
        units=tree,
    )


def _part_tree(
    parsed: list[KnowledgeUnit], part: int, source_id: str, aggregate_id: str, char_start: int, char_end: int
) -> tuple[KnowledgeUnit, list[KnowledgeUnit]]:
    """The part's composite (the model's summary, or one built from the leaves' topics) and its leaves."""
    section_id = f"{source_id}::section-{part:03d}"
    leaves = [u for u in parsed if u.kuType != "composite" and u.id != section_id]
    summary = next((u for u in parsed if u.id == section_id), None)
    leaf_ids = [u.id for u in leaves]
    if summary is None:
        topics = ", ".join(dict.fromkeys(u.topic for u in leaves))
        summary = KnowledgeUnit(
            id=section_id,
            sourceId=source_id,
            chunkId=f"{source_id}::chunk-{part:03d}",
            kuType="composite",
            role="Description",
            topic=leaves[0].topic if leaves else "part",
            claim=f"Part {part + 1} covers: {topics}.",
        )
    section = msgspec.structs.replace(
        summary,
        kuType="composite",
        chunkIndex=part,
        parentUnitIds=[aggregate_id],
        childUnitIds=leaf_ids,
        charStart=char_start,
        charEnd=char_end,
    )
    leaves = [
        msgspec.structs.replace(u, chunkIndex=part, unitIndex=i, parentUnitIds=[section_id])
        for i, u in enumerate(leaves)
    ]
    return section, leaves
