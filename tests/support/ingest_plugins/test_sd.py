"""Scripted sd test plugin for ingest tests: paragraphs become sections, sentences become atomic units.

Like a real sd-plugin it numbers sections and chunks from zero in every call (the kernel must make ids
unique across chunks) and shifts CharStart/CharEnd by payload.charOffset. Markers in the text script
failures: @@UNSUPPORTED@@ -> `unsupported`, @@ERROR@@ -> a processing error, @@SLOW@@ -> 20 ms per call,
@@PACE=<ms>@@ -> <ms> of sleep per MiB of the chunk's text (a plugin whose time grows with the text),
@@BOTH@@ -> a unit with both a Claim and a Procedure (a reply the kernel must refuse, in CNL or compact).
With MRPVM_TEST_SD_LOG set, every call appends its payload (text as its length) to that JSON-lines file.
"""

import json
import os
import re
import sys
import time

import msgspec
from mrpvm.plugins.sdk import Call, Plugin, PluginFailure
from mrpvm.protocol.document import KnowledgeUnit

PARAGRAPH = re.compile(r"\n[ \t]*\n")
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def spans(pattern, text, start, end):
    pos = start
    for m in pattern.finditer(text, start, end):
        yield pos, m.start()
        pos = m.end()
    yield pos, end


def trimmed(text, a, b):
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def unit(**kw):
    return KnowledgeUnit(role="Description", **kw)


def log_call(call: Call) -> None:
    path = os.environ.get("MRPVM_TEST_SD_LOG")
    if path:
        entry = {k: v for k, v in msgspec.structs.asdict(call.payload).items() if k != "text"}
        entry.update(textLength=len(call.payload.text), sessionId=call.request.sessionId)
        with open(path, "a") as handle:
            handle.write(json.dumps(entry) + "\n")


PACE = re.compile(r"@@PACE=(\d+)@@")


def pace(text: str) -> None:
    """@@PACE=<ms>@@ in the text: sleep <ms> per MiB of it (the SDK's deadline alarm still applies)."""
    m = PACE.search(text)
    if m:
        time.sleep(int(m.group(1)) / 1000 * len(text.encode()) / (1 << 20))


def normalize(call: Call):
    log_call(call)
    p = call.payload
    text = p.text or call.prompt
    if "@@UNSUPPORTED@@" in text:
        return call.reply("unsupported", result="this test sd does not normalize marked sources")
    if "@@ERROR@@" in text:
        raise PluginFailure("SCRIPTED_ERROR", "scripted failure")
    if "@@SLOW@@" in text:
        time.sleep(0.02)
    pace(text)
    sid, off = p.sourceId or "src", p.charOffset
    units, sections = [], []
    for s_index, (a, b) in enumerate(
        x for x in spans(PARAGRAPH, text, 0, len(text)) if text[x[0] : x[1]].strip()
    ):
        a, b = trimmed(text, a, b)
        section_id = f"{sid}::section-{s_index:03d}"
        chunk_id = f"{sid}::chunk-{s_index:03d}"
        leaves = []
        for u_index, (c, d) in enumerate(x for x in spans(SENTENCE, text, a, b) if text[x[0] : x[1]].strip()):
            c, d = trimmed(text, c, d)
            body = text[c:d]
            leaves.append(
                unit(
                    id=f"{chunk_id}::unit-{u_index:03d}",
                    sourceId=sid,
                    chunkId=chunk_id,
                    kuType="atomic",
                    topic=" ".join(body.split()[:3]),
                    claim=body,
                    textBody=body,
                    charStart=off + c,
                    charEnd=off + d,
                    chunkIndex=p.chunkIndex,
                    parentUnitIds=[section_id],
                )
            )
        first = leaves[0].claim if leaves else text[a:b]
        sections.append(
            unit(
                id=section_id,
                sourceId=sid,
                chunkId=chunk_id,
                kuType="composite",
                topic="section",
                claim=first,
                charStart=off + a,
                charEnd=off + b,
                parentUnitIds=[f"{sid}::source-summary"],
                childUnitIds=[u.id for u in leaves],
            )
        )
        units.extend(leaves)
    summary = unit(
        id=f"{sid}::source-summary",
        sourceId=sid,
        chunkId=f"{sid}::chunk-000",
        kuType="aggregate",
        topic="summary",
        claim=f"Part {p.chunkIndex} starts: {sections[0].claim[:80]}" if sections else "empty",
        charStart=off,
        charEnd=off + len(text),
        childUnitIds=[s.id for s in sections],
    )
    if "@@BOTH@@" in text and units:
        units[0].procedure = "Do it."
    return call.reply("success", "high", result=f"{len(units)} units", units=[summary, *sections, *units])


plugin = Plugin(
    sys.argv[1] if len(sys.argv) > 1 else "test-sd", "sd-plugin", {"normalizePersistentContext": normalize}
)

if __name__ == "__main__":
    plugin.main()
