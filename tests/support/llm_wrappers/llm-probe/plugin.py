"""Test gs-plugin: writes what it was given (its MRPVM_* environment, `llm.baseUrl`/`llm.apiKey`) to the
file named by MRPVM_TEST_PROBE_OUT, makes one LLM call through the kernel's endpoint, and answers with it."""

import json
import os

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.plugins.sdk.llm import chat


def solve(call: Call):
    llm = call.llm
    report = {
        "env": {k: v for k, v in os.environ.items() if k.startswith("MRPVM_")},
        "baseUrl": llm.baseUrl if llm else None,
        "apiKey": llm.apiKey if llm else None,
        "model": llm.model if llm else None,
    }
    with open(os.environ["MRPVM_TEST_PROBE_OUT"], "w") as fh:
        json.dump(report, fh)
    answer = chat(call, [{"role": "user", "content": f"probe: {call.prompt}"}]) if llm else "no llm"
    evidence = [u.id for u in call.payload.evidence]
    return call.reply("success", "high", result="probe", answer=answer, sources=evidence[:1])


plugin = Plugin("llm-probe", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
