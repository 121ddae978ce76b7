"""sd-symbolic: rule-based seed detection (detectSeeds) and KU-tree extraction (normalizePersistentContext).

cat request.json | python -m mrpvm.plugins.sd_symbolic          # one-shot
MRPVM_WORKER=1 python -m mrpvm.plugins.sd_symbolic              # worker (framed)
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from mrpvm.plugins.sdk import Call, InvalidInput, Plugin
from mrpvm.protocol.cnl_compact import COMPACT_FORM
from mrpvm.protocol.document import CnlDocument
from mrpvm.protocol.envelope import DetectSeedsPayload, NormalizePayload

from .turn_seeds.intents import detect_seeds

PLUGIN_ID = "sd-symbolic"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _safe_id(raw: str) -> str:
    return "-".join(raw.split())


def normalize_persistent_context(call: Call) -> CnlDocument:
    # loaded at the first source, not at the worker's start: a one-turn `mrpvm ask` whose --source units the
    # kernel kept (knowledge/kept_units.py) only detects seeds
    from .source_units.assemble import build_analysed_tree, build_tree
    from .source_units.shipped import with_analysis
    from .source_units.tree import SourceMeta, source_id_for

    payload: NormalizePayload = call.payload
    text = payload.text or call.prompt
    if not text.strip():
        raise InvalidInput(
            "EMPTY_SOURCE", "normalizePersistentContext needs non-blank text (payload.text or prompt)"
        )
    source_id = _safe_id(payload.sourceId) or source_id_for(payload.sourceName, text)
    meta = SourceMeta(
        source_id=source_id,
        source_name=payload.sourceName or source_id,
        source_type=payload.sourceType or "text",
        author=payload.author,
        knowledge_date=payload.knowledgeDate,
        chunk_base=payload.chunkIndex,
        char_offset=payload.charOffset,
        created_at=_now(),
    )
    # a kb source's units analysed for the kb-plugins' units file (a session load has none)
    analysed = payload.replyForm == COMPACT_FORM and payload.scope == "kb"
    units, analysis = build_analysed_tree(text, meta) if analysed else (build_tree(text, meta), [])
    levels = Counter(u.kuType for u in units)
    facts = sum(1 for u in units if u.relation)
    roles = Counter(u.role for u in units if u.kuType == "atomic")
    doc = call.reply(
        "success",
        "high",
        result=(
            f"{len(units)} KUs from {source_id}: {levels['atomic']} atomic, {levels['composite']} composite, "
            f"{levels['aggregate']} aggregate"
        ),
        evidence=f"{facts} symbolic facts; roles " + ", ".join(f"{r} {n}" for r, n in roles.most_common()),
        units=units,
    )
    return with_analysis(doc, analysis) if analysed else doc


def detect_seeds_handler(call: Call) -> CnlDocument:
    payload: DetectSeedsPayload = call.payload
    prompt = call.prompt
    if not prompt.strip() and payload.mode == "decompose" and payload.parentIntent is not None:
        prompt = payload.parentIntent.intent
    if not prompt.strip():
        raise InvalidInput("EMPTY_PROMPT", "detectSeeds needs a non-blank prompt (the user turn)")
    outcome = detect_seeds(prompt, payload, created_at=_now())
    acts = ", ".join(i.act for i in outcome.intents)
    return call.reply(
        "success",
        outcome.confidence,
        result=f"{len(outcome.intents)} intents, {len(outcome.units)} current-turn context units",
        evidence=f"acts: {acts}" + (f"; {outcome.notes}" if outcome.notes else ""),
        intents=outcome.intents,
        units=outcome.units,
    )


plugin = Plugin(
    PLUGIN_ID,
    "sd-plugin",
    {"detectSeeds": detect_seeds_handler, "normalizePersistentContext": normalize_persistent_context},
)

if __name__ == "__main__":
    plugin.main()
