"""Broken on purpose: correct in one-shot mode, but in worker mode it dies on the first frame."""

import os
import sys

from mrpvm.plugins.sdk import Call, Plugin


def solve(call: Call):
    return call.reply("success", "low", result="ok", answer="An answer.", sources=[])


plugin = Plugin("worker-dies", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    if os.environ.get("MRPVM_WORKER") != "1":
        plugin.main()
    sys.stdin.buffer.readline()
    sys.stderr.write("worker-dies: giving up on the first frame\n")
    sys.exit(1)
