"""Broken on purpose: correct in one-shot mode, but in worker mode every answer carries the wrong Request id."""

import os
import sys

from mrpvm.plugins.sdk import Call, Plugin, reply
from mrpvm.protocol.cnl import render_document
from mrpvm.protocol.framing import encode_frame, read_frame


def solve(call: Call):
    return call.reply("success", "low", result="ok", answer="An answer.", sources=[])


plugin = Plugin("worker-wrong-id", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    if os.environ.get("MRPVM_WORKER") != "1":
        plugin.main()
    count = 0
    while (body := read_frame(sys.stdin.buffer)) is not None:
        count += 1
        doc, failure, _ = plugin.run(body)
        if doc is None:
            doc = reply("worker-wrong-id", "error", code=failure.code, result=failure.message)
        doc.result.request = f"wrong-{count}"
        sys.stdout.buffer.write(encode_frame(render_document(doc).encode()))
        sys.stdout.buffer.flush()
