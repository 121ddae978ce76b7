"""A kb-plugin written from protocol/SPEC.md alone (no SDK): one-shot, `handoff: file`.

It reads the request (one JSON object on stdin), reads `payload.unitsFile` with any MessagePack decoder,
and records what it saw in its artifacts folder (probe.jsonl): the file's path and units, whether its
folder can be listed, whether another plugin's handoff folder is visible, whether it can write the file.
Its answer is CNL Markdown on stdout. With argv[1] == "leak" it also tries every name it recorded on
earlier calls (another call's file).
"""

import json
import os
import sys

import msgspec  # any MessagePack decoder would do; this one is installed with the kernel

request = json.load(sys.stdin)
payload = request.get("payload") or {}
folder = (request.get("paths") or {}).get("artifacts") or ""
log = os.path.join(folder, "probe.jsonl")
entry = {"op": request.get("op"), "action": payload.get("action"), "unitsFile": payload.get("unitsFile", "")}
path = entry["unitsFile"]
if request.get("op") == "onSourceText" and path:
    try:
        with open(path, "rb") as f:
            doc = msgspec.msgpack.decode(f.read())
    except OSError as err:
        sys.stderr.write(json.dumps({"code": "INVALID_HANDOFF", "message": str(err)}) + "\n")
        sys.exit(2)
    entry.update(
        bytes=os.path.getsize(path),
        format=doc.get("format"),
        version=doc.get("version"),
        sourceId=doc.get("sourceId"),
        units=[u["id"] for u in doc.get("units", [])],
        analyser=doc.get("analyser", ""),
        analysed=len(doc.get("analysis", [])),
        inlineUnits=len(payload.get("units") or []),
    )
    here = os.path.dirname(path)
    try:
        os.listdir(here)
        entry["listed"] = True
    except OSError:
        entry["listed"] = False
    entry["otherPluginFolder"] = os.path.exists(os.path.join(os.path.dirname(here), "test-kb-inline"))
    try:
        with open(path, "ab"):
            entry["writable"] = True
    except OSError:
        entry["writable"] = False
    earlier = []
    if os.path.exists(log):
        with open(log) as f:
            earlier = [json.loads(line)["unitsFile"] for line in f if line.strip()]
    entry["earlierReadable"] = [p for p in earlier if p and p != path and os.path.exists(p)]
with open(log, "a") as f:
    f.write(json.dumps(entry) + "\n")
sys.stdout.write(
    "## Plugin Result\nStatus: success\nPlugin: test-kb-file\nConfidence: high\n"
    f"Result: saw {len(entry.get('units', []))} units\nLLMCalls: 0\n"
)
