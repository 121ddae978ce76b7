"""Test kb-plugin carrying a real author's bug: every unit it returns is written with `Claim:`, a
`Role: Procedure` unit too (the kernel's CNL validation refuses that: [procedure-role]). Its index is
one JSON file of the units it was sent; retrieve returns the units sharing a word with the prompt.
`mrpvm plugin check` must catch the bug; a turn pinned to it must name it in the answer."""

import json
import re

import msgspec
from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.protocol.document import ResolvedIntent


def _index(call: Call):
    folder = call.artifacts()
    return None if folder is None else folder / "units.json"


def _load(call: Call) -> dict:
    path = _index(call)
    return json.loads(path.read_text()) if path is not None and path.exists() else {}


def on_source_text(call: Call):
    path = _index(call)
    units = _load(call)
    payload = call.payload
    units = {k: v for k, v in units.items() if v["sourceId"] != payload.sourceId}
    if payload.action != "remove":
        for unit in payload.units:
            units[unit.id] = msgspec.to_builtins(unit)
    if path is not None:
        path.write_text(json.dumps(units))
    return call.reply("success", "high", result=f"{len(units)} units indexed")


def on_session_event(call: Call):
    return call.reply("success", "high", result="noted")


def retrieve(call: Call):
    words = set(re.findall(r"[a-z]{4,}", call.prompt.lower()))
    chosen = []
    for data in _load(call).values():
        text = " ".join(str(data.get(k) or "") for k in ("topic", "claim", "procedure", "title")).lower()
        if words & set(re.findall(r"[a-z]{4,}", text)):
            unit = msgspec.convert(data, call.plugin.unit_type)
            body = unit.procedure or unit.claim
            chosen.append(msgspec.structs.replace(unit, claim=body, procedure=None))  # the bug
    chosen = chosen[:6]
    resolved = [ResolvedIntent(sufficient=bool(chosen), selected=[u.id for u in chosen])]
    return call.reply("success" if chosen else "insufficient", "medium", resolved=resolved, units=chosen)


plugin = Plugin(
    "kb-claims-only",
    "kb-plugin",
    {"retrieve": retrieve, "onSourceText": on_source_text, "onSessionEvent": on_session_event},
)
plugin.unit_type = __import__("mrpvm.protocol.document", fromlist=["KnowledgeUnit"]).KnowledgeUnit

if __name__ == "__main__":
    plugin.main()
