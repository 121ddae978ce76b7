"""Scripted kb test plugin: records every onSourceText/onSessionEvent in its artifacts folder (calls.jsonl).

A plugin id ending in `-fail` answers every notification with a processing error. @@PACE=<ms>@@ in a
source's text: <ms> of sleep per MiB of it before recording (as test_sd.py). @@PARTIAL=<n>@@ in a unit of
a source (re-offers carry the units, not the text): its first <n> upserts are answered `partial`, as a
plugin that builds its index over several offers does (kb-balanced's dense view).
"""

import json
import re
import sys
import time

from mrpvm.plugins.sdk import Call, Plugin, PluginFailure

PLUGIN_ID = sys.argv[1] if len(sys.argv) > 1 else "test-kb"
PACE = re.compile(r"@@PACE=(\d+)@@")  # as test_sd.py (each test plugin is one standalone file)
PARTIAL = re.compile(r"@@PARTIAL=(\d+)@@")


def pace(text: str) -> None:
    m = PACE.search(text)
    if m:
        time.sleep(int(m.group(1)) / 1000 * len(text.encode()) / (1 << 20))


def record(call: Call):
    if PLUGIN_ID.endswith("-fail"):
        raise PluginFailure("SCRIPTED_ERROR", "scripted index failure")
    folder = call.artifacts()
    p = call.payload
    entry = {"op": call.op, "units": len(p.units), "sessionId": call.request.sessionId}
    if call.op == "onSourceText":
        pace(p.text)
        entry.update(kbId=p.kbId, sourceId=p.sourceId, action=p.action, textBytes=len(p.text.encode()))
    else:
        entry.update(event=p.event, scope=p.scope)
    log = folder / "calls.jsonl"
    earlier = log.read_text().splitlines() if log.exists() else []
    with open(log, "a") as handle:
        handle.write(json.dumps(entry) + "\n")
    if call.op == "onSourceText" and p.action == "upsert":
        wanted = next((int(m.group(1)) for u in p.units if (m := PARTIAL.search(u.body or ""))), 0)
        offers = sum(1 for line in earlier if json.loads(line).get("sourceId") == p.sourceId) + 1
        if offers <= wanted:
            return call.reply("partial", "high", result=f"offer {offers} of {p.sourceId}: indexed in part")
    return call.reply("success", "high", result=f"recorded {call.op}")


plugin = Plugin(PLUGIN_ID, "kb-plugin", {"onSourceText": record, "onSessionEvent": record})

if __name__ == "__main__":
    plugin.main()
