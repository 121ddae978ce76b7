"""Test plugin that fails on command, to check that `mrpvm plugin run` mirrors its exit codes.

Prompt "fail" → processing error (exit 1 / error result), "invalid" → invalid input (exit 2 / error result),
"sleep" → overruns its deadline (exit 3 / TIMEOUT error result); anything else succeeds.
"""

import time

from mrpvm.plugins.sdk import Call, InvalidInput, Plugin, PluginFailure


def solve(call: Call):
    if call.prompt == "fail":
        raise PluginFailure("BOOM", "failing-gs was asked to fail")
    if call.prompt == "invalid":
        raise InvalidInput("INVALID_INPUT", "failing-gs refuses this prompt")
    if call.prompt == "sleep":
        time.sleep(30)
    return call.reply("success", "high", result="fine", answer=f"You said: {call.prompt}", sources=[])


plugin = Plugin("failing-gs", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
