"""Test gs-plugin with a 1 s manifest timeout: one LLM call, answered with the model's words and the first
evidence unit as its source (a slow model's call must get the kernel's LLM time, not the manifest's 1 s)."""

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.plugins.sdk.llm import chat


def solve(call: Call):
    answer = chat(call, [{"role": "user", "content": f"question: {call.prompt}"}])
    evidence = [u.id for u in call.payload.evidence]
    return call.reply("success", "high", result="short", answer=answer, sources=evidence[:1])


plugin = Plugin("llm-short", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
