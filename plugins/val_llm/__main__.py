"""val-llm: one LLM call (role validation) decides whether an answer is grounded and addresses the question.

`accepted` or `rejected` with the reason in `Result`. Anything the model says that is not a clear
verdict, and any LLM failure, is an error — never an accept. Without an LLM endpoint: `unsupported`.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk import Call, Plugin, PluginFailure
from mrpvm.plugins.sdk.llm import (
    chat,
    evidence_tokens,
    fill,
    fit_units,
    load_prompt,
    reply_tokens,
    unsupported_without_llm,
)
from mrpvm.protocol.document import CnlDocument, IntentGroup
from mrpvm.protocol.envelope import ValidatePayload

PLUGIN_ID = "val-llm"
MAX_TOKENS = 200
_VERDICT_LINE = re.compile(r"^\W*verdict\W*:(.*)$", re.IGNORECASE | re.MULTILINE)
_VERDICT_WORD = re.compile(r"\b(accept|reject)(?:ed)?\b", re.IGNORECASE)
_REASON = re.compile(r"^\W*reason\W*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)


def read_verdict(text: str) -> tuple[str, str]:
    """(accepted|rejected, reason) from the model's two lines; a missing or double verdict is an error."""
    verdicts = {  # every verdict word on a Verdict line: an echo of "accepted or rejected" is no verdict
        f"{w.group(1).lower()}ed"
        for m in _VERDICT_LINE.finditer(text)
        for w in _VERDICT_WORD.finditer(m.group(1))
    }
    if len(verdicts) != 1:
        found = "no verdict" if not verdicts else "conflicting verdicts"
        raise PluginFailure(
            "INVALID_MODEL_OUTPUT", f"the validator model gave {found}: {' '.join(text.split())[:200]!r}"
        )
    verdict = verdicts.pop()
    found = _REASON.search(text)
    reason = " ".join(found.group(1).split())[:500] if found else ""
    if reason.startswith("<") and reason.endswith(">"):  # the prompt's placeholder copied: no reason given
        reason = ""
    return verdict, reason


def validate(call: Call) -> CnlDocument:
    if (refusal := unsupported_without_llm(call)) is not None:
        return refusal
    payload: ValidatePayload = call.payload
    answer = payload.answer.strip()
    if not answer:
        return call.reply("rejected", "high", result="the answer is empty")
    evidence = list(payload.evidence) or call.context_units()
    if not evidence:
        return call.reply("rejected", "high", result="there is no evidence to ground the answer in")
    intent = payload.intent or IntentGroup(act="describe", intent=call.prompt, output="an answer")
    known = {u.id for u in evidence}
    cited = ""
    if payload.sources:
        unknown = [s for s in payload.sources if s not in known]
        cited = f"The answer cites: {', '.join(payload.sources)}\n"
        if unknown:
            cited += f"Cited ids that are not in the evidence: {', '.join(unknown)}\n"
    criteria = ""
    if intent.criterion:
        criteria += f"A good answer: {intent.criterion}\n"
    if payload.guidance:
        criteria += (
            "Validation notes:\n"
            + "\n".join(f"- {' '.join(u.body.split())}" for u in payload.guidance)
            + "\n"
        )
    system = load_prompt(__file__, "validate")

    def case(evidence_lines: str) -> str:
        return fill(
            load_prompt(__file__, "case"),
            act=intent.act,
            intent=intent.intent,
            output=intent.output,
            criteria=criteria,
            answer=answer,
            cited=cited,
            evidence=evidence_lines,
        )

    reply = reply_tokens(call, MAX_TOKENS)
    # the cited units first: they are what the answer claims to rest on
    ordered = sorted(evidence, key=lambda u: u.id not in set(payload.sources))
    lines, given = fit_units(ordered, evidence_tokens(call, [system, case("")], reply))
    if not given:
        raise PluginFailure(
            "CONTEXT_WINDOW_TOO_SMALL",
            "the answer and its question leave no room for evidence in the model's context window",
            {"reason": "context-window"},
        )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": case(lines)}]
    verdict, reason = read_verdict(chat(call, messages, max_tokens=reply))
    default = (
        "grounded in the evidence and addresses the question"
        if verdict == "accepted"
        else "rejected by the validator model"
    )
    return call.reply(
        verdict,
        "medium",
        result=reason or default,
        evidence=f"checked against {len(given)} of {len(evidence)} evidence unit(s)",
    )


plugin = Plugin(PLUGIN_ID, "val-plugin", {"validate": validate})

if __name__ == "__main__":
    plugin.main()
