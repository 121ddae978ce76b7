"""gs-symbolic declares `pure` (its warm solve replies may be reused by request content, kernel/supervisor/
reply_memo.py): the same request answers the same bytes however many other solves ran in between."""

from __future__ import annotations

import json

import msgspec
from answer_support import units_of
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs
from mrpvm.protocol.document import IntentGroup

DOC = """# Harbour pumps

## Starting a pump

The brine pump starts when the float switch closes. Prime the pump with fresh water before the first start.
A pump that runs dry for more than two minutes trips its thermal fuse.

## Maintenance

The impeller is replaced every 900 running hours. Inspect the seals each spring; a weeping seal is
replaced, not tightened. The logbook records every replacement with the running hours.

## Alarms

A red lamp means the thermal fuse has tripped. An amber lamp means the float switch is stuck open.
"""

QUESTIONS = [
    "When is the impeller replaced?",
    "What does a red lamp mean?",
    "How do you prime the pump?",
    "Is a weeping seal tightened?",
    "What trips the thermal fuse?",
]


def solve_body(question: str, evidence) -> bytes:
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    payload = {
        "intent": msgspec.to_builtins(group),
        "evidence": msgspec.to_builtins(evidence),
        "guidance": [],
        "allowDecompose": False,
    }
    return json.dumps({"op": "solve", "prompt": question, "context": [], "payload": payload}).encode()


def test_gs_symbolic_declares_pure():
    assert json.loads((MANIFESTS_DIR / "gs-symbolic.json").read_text())["pure"] is True


def test_a_solve_answers_the_same_bytes_after_any_other_solves():
    units = units_of(DOC, "pumps.md", "pumps")
    atomic = [u for u in units if u.kuType == "atomic"]
    bodies = {q: solve_body(q, atomic) for q in QUESTIONS}
    # the same questions over a part of the evidence: other requests that leave their state behind
    others = [solve_body(q, atomic[: len(atomic) // 2]) for q in reversed(QUESTIONS)]
    first = {q: gs.handle(body) for q, body in bodies.items()}
    for body in others:
        gs.handle(body)
    again = {q: gs.handle(body) for q, body in reversed(list(bodies.items()))}
    assert again == first
    assert len(set(first.values())) == len(QUESTIONS)  # the questions are told apart
