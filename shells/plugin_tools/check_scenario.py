"""`mrpvm plugin check`: a kb-plugin indexes a small built-in document, then answers realistic retrieves.

The example requests alone cannot show how a kb-plugin writes the units it indexed (an example retrieve
meets an empty index). Here the plugin is sent `onSourceText` with the example document's whole unit
tree (a definition, an explanation, a procedure, a constraint with a fact triple), then one `retrieve`
per kind of question, shaped as a turn sends it (the user's question as prompt, one intent, the KB's
artifacts folder). Each answer goes through `parse_document`, the very validation the kernel's
supervisor applies to every answer in a turn, so a plugin that passes cannot fail it on these shapes.
"""

from __future__ import annotations

import os

import msgspec
from mrpvm.protocol.document import IntentGroup
from mrpvm.protocol.envelope import Budget, Paths, Request, RetrievePayload, encode_request
from mrpvm.protocol.example_fixtures import KB_UNITS
from mrpvm.protocol.examples import EXAMPLE_REQUESTS

from .check_handoff import with_units_file
from .check_judge import CheckResult, judge_answer, judge_valid

# (question, act, answer shape): one question per unit kind the built-in document holds
QUESTIONS = (
    ("How do I enable WAL mode?", "implement", "the steps to enable WAL mode", "Procedure"),
    ("What is WAL mode?", "define", "a definition of WAL mode", "Definition"),
    ("Does WAL work over a network filesystem?", "verify", "yes or no with the reason", "Constraint"),
)
KB_ID = "kb-check"


def scenario_applies(ops: list[str], plugin_type: str) -> bool:
    return plugin_type == "kb-plugin" and "onSourceText" in ops and "retrieve" in ops


def _index_request(artifacts: str, timeout_ms: int) -> Request:
    request = msgspec.structs.replace(
        EXAMPLE_REQUESTS["onSourceText"],
        paths=Paths(artifacts=artifacts),
        budget=Budget(llmCalls=0, deadlineMs=timeout_ms),
    )
    request.payload = msgspec.structs.replace(request.payload, kbId=KB_ID)
    return request


def _retrieve_request(question: str, act: str, output: str, artifacts: str, timeout_ms: int) -> bytes:
    intent = IntentGroup(index=1, act=act, intent=question, output=output)
    request = Request(
        op="retrieve",
        prompt=question,
        context=[],
        payload=RetrievePayload(intents=[intent], units=[], kbId=KB_ID, purpose="task-evidence", maxUnits=6),
        budget=Budget(llmCalls=0, deadlineMs=timeout_ms),
        paths=Paths(artifacts=artifacts),
        requestId="req-check",
        frameId="frame-0",
        sessionId="ses-check",
    )
    return encode_request(request)


async def check_kb_scenario(
    supervisor, entry, artifacts: str, timeout_s: float, handoff=None
) -> list[CheckResult]:
    """onSourceText with the built-in document (in a units file in `handoff`, the plugin's handoff folder,
    when it declares `handoff: file`), then one retrieve per question kind; judged as a turn is."""
    from mrpvm.kernel.supervisor import PluginCallError

    os.makedirs(artifacts, exist_ok=True)
    timeout_ms = int(timeout_s * 1000)
    roles = ", ".join(sorted({u.role for u in KB_UNITS}))
    name = f"built-in document ({len(KB_UNITS)} units: {roles}) indexed with onSourceText"
    request, path = _index_request(artifacts, timeout_ms), None
    if handoff is not None:
        request, path = with_units_file(request, handoff)
    try:
        reply = await supervisor.call_raw(
            entry.id, encode_request(request), timeout_s=timeout_s, one_shot=True
        )
    except PluginCallError as err:
        return [
            CheckResult(name=name, passed=False, detail=f"kernel error {err.error.code}: {err.error.message}")
        ]
    finally:
        if path is not None:
            handoff.discard(path)
    passed, detail = judge_valid(reply, "onSourceText", entry.id)
    results = [CheckResult(name=name, passed=passed, detail=detail)]
    if not passed:
        return results
    for question, act, output, role in QUESTIONS:
        name = f"retrieve after indexing: {question!r} ({role} units in the index)"
        body = _retrieve_request(question, act, output, artifacts, timeout_ms)
        try:
            reply = await supervisor.call_raw(entry.id, body, timeout_s=timeout_s, one_shot=True)
        except PluginCallError as err:
            results.append(
                CheckResult(
                    name=name, passed=False, detail=f"kernel error {err.error.code}: {err.error.message}"
                )
            )
            continue
        passed, detail = judge_valid(reply, "retrieve", entry.id)
        if passed:
            doc, _ = judge_answer(reply.stdout, "retrieve", entry.id)
            count = len(doc.units) if doc is not None else 0
            if count == 0:
                results.append(
                    CheckResult(
                        name=name,
                        passed=True,
                        warning=True,
                        detail=f"{detail}; no unit returned, so how the plugin writes units was not seen — "
                        "a kb-plugin should find the indexed units for this question",
                    )
                )
                continue
            detail = f"{detail}; {count} unit(s) returned, valid as the kernel reads them"
        results.append(CheckResult(name=name, passed=passed, detail=detail))
    return results
