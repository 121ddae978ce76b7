"""Broken on purpose: right exit code for invalid input, but a multi-line traceback on stderr instead of one JSON line."""

import sys
import traceback

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.protocol.envelope import RequestError, decode_request


def solve(call: Call):
    return call.reply("success", "low", result="ok", answer="An answer.", sources=[])


plugin = Plugin("multiline-stderr", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    data = sys.stdin.buffer.read()
    try:
        decode_request(data, "gs-plugin")
    except RequestError:
        traceback.print_exc()
        sys.exit(2)

    sys.stdout.write(plugin.handle(data))
