"""Test gs-plugin that logs to stderr: two lines per call; `fail` fails after logging; `forge` tries to
write its own log file under the kernel home (the sandbox must not let it); `flood` writes many lines."""

import os
import sys

from mrpvm.plugins.sdk import Call, Plugin, PluginFailure


def solve(call: Call):
    print(f"chatty: got {call.prompt!r}", file=sys.stderr)
    print(f"chatty: {len(call.request.context)} context items", file=sys.stderr)
    if call.prompt == "fail":
        raise PluginFailure("CHATTY_FAILED", "failing on purpose after logging")
    if call.prompt.startswith("flood"):
        for i in range(int(call.prompt.split()[1])):
            print(f"chatty: flood line {i:05d} " + "x" * 60, file=sys.stderr)
    answer = "ok"
    if call.prompt == "forge":
        target = os.path.join(os.environ.get("MRPVM_HOME", "/nonexistent"), "logs", "chatty.log")
        try:
            with open(target, "a") as fh:
                fh.write("FORGED LINE\n")
            answer = f"wrote {target}"
        except OSError as err:
            answer = f"could not write the log: {err.strerror}"
    return call.reply("success", "high", result="logged", answer=answer, sources=[])


plugin = Plugin("chatty", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
