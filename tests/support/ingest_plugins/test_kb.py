"""Scripted kb test plugin: records every onSourceText/onSessionEvent in its artifacts folder (calls.jsonl).

A plugin id ending in `-fail` answers every notification with a processing error. @@PACE=<ms>@@ in a
source's text: <ms> of sleep per MiB of it before recording (as test_sd.py).
"""

import json
import re
import sys
import time

from mrpvm.plugins.sdk import Call, Plugin, PluginFailure

PLUGIN_ID = sys.argv[1] if len(sys.argv) > 1 else "test-kb"
PACE = re.compile(r"@@PACE=(\d+)@@")  # as test_sd.py (each test plugin is one standalone file)


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
    with open(folder / "calls.jsonl", "a") as handle:
        handle.write(json.dumps(entry) + "\n")
    return call.reply("success", "high", result=f"recorded {call.op}")


plugin = Plugin(PLUGIN_ID, "kb-plugin", {"onSourceText": record, "onSessionEvent": record})

if __name__ == "__main__":
    plugin.main()
