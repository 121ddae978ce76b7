"""Validator calibration: each verdict a validator gave during an evaluation, scored against the suite.

The trace links every `validate` call to the answer it judged (a `validates` edge); that answer is scored
like a final one (scoring.score: answerPass). A rejection of a failing answer and an acceptance of a
passing one are right. `mrpvm eval` adds the counts to the home's validator records after the whole
evaluation (kernel/validator_records.py), so that runs within one evaluation all see the same records.
"""

from __future__ import annotations

from typing import Any

import msgspec
from mrpvm.kernel.validator_records import ValidatorRecords
from mrpvm.shells.evaluation.scoring import score
from mrpvm.shells.evaluation.suites import Expected


class JudgedVerdict(msgspec.Struct, kw_only=True, frozen=True):
    validator: str
    verdict: str  # accepted | rejected (the validator's own verdict, also when the kernel overruled it)
    answerFrom: str
    right: bool


def judged_verdicts(trace: dict[str, Any], expected: Expected) -> list[JudgedVerdict]:
    nodes = {n["id"]: n for n in trace.get("nodes") or []}
    out = []
    for edge in trace.get("edges") or []:
        if edge.get("kind") != "validates":
            continue
        val, answer = nodes.get(edge["src"]), nodes.get(edge["dst"])
        if val is None or answer is None or val.get("status") not in ("accepted", "rejected"):
            continue
        text = (answer.get("output") or {}).get("answer") or ""
        passed = score(expected, [], [], text).answerPass
        out.append(
            JudgedVerdict(
                validator=val.get("pluginId") or "",
                verdict=val["status"],
                answerFrom=answer.get("pluginId") or "",
                right=passed == (val["status"] == "accepted"),
            )
        )
    return out


def measured(verdicts: list[JudgedVerdict]) -> ValidatorRecords:
    records = ValidatorRecords()
    for v in verdicts:
        records.add(v.validator, v.verdict, v.right)
    return records
