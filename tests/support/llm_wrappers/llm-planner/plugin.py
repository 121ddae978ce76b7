"""Test planner: no plan of its own (kernel defaults); its recordOutcome asks the LLM for a lesson and
answers with the model's text (so a test sees whether the call got through)."""

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.plugins.sdk.llm import chat


def build_plan(call: Call):
    return call.reply("unsupported", result="llm-planner leaves the plan to the kernel")


def record_outcome(call: Call):
    if call.llm is None:
        return call.reply("unsupported", result="no LLM access")
    lesson = chat(call, [{"role": "user", "content": f"lesson from a {call.payload.status} turn"}])
    return call.reply("success", "high", result=lesson)


plugin = Plugin("llm-planner", "mrp-plan-plugin", {"buildPlan": build_plan, "recordOutcome": record_outcome})

if __name__ == "__main__":
    plugin.main()
