"""CNL rules that span several fields of one section (protocol/cnl.py types each field on its own).

`section` is the parser's raw section (its `line` and per-field `lines`, for the issue's location);
`report(line, rule, message)` records an issue.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .vocab import ACTS, ANSWER_TYPES

# the fields `check_unit` reads (a compact reply's checks read these columns: cnl_compact.py, cnl_columns.py)
UNIT_RULE_ATTRS = ("claim", "procedure", "role", "subject", "relation", "object", "confidence")


class _AnyLine(dict):
    def __missing__(self, key: str) -> int:
        return 0


class _Nowhere:
    """A section without a place (a typed unit's fields, not a parsed section's): its line numbers are 0."""

    line = 0
    lines = _AnyLine()


NOWHERE = _Nowhere()


def check_unit(section: Any, fields: dict[str, Any], report: Callable[[int, str, str], None]) -> None:
    has_claim, has_proc = "claim" in fields, "procedure" in fields
    if has_claim == has_proc:
        report(section.line, "claim-or-procedure", "a Context Unit has exactly one of Claim or Procedure")
    role = fields.get("role")
    if role is not None and has_proc != (role == "Procedure"):
        report(section.line, "procedure-role", "Procedure is used if and only if Role is Procedure")
    triple = [k for k in ("subject", "relation", "object") if k in fields]
    if triple and len(triple) != 3:
        report(
            section.line, "triple-all-or-none", "Subject, Relation and Object come all three or not at all"
        )
    if "confidence" in fields:
        if len(triple) != 3:
            report(
                section.lines["Confidence"],
                "confidence-needs-triple",
                "Confidence is allowed only with a triple",
            )
        elif not 0.0 <= fields["confidence"] <= 1.0:
            report(section.lines["Confidence"], "confidence-range", "Confidence must be in [0,1]")


_OBSERVATION_RANGES = (  # (attr, field, lowest, highest, lowest excluded, as the message says it)
    ("success", "Success", 0.0, 1.0, False, "in [0, 1]"),
    ("sufficiency", "Sufficiency", 0.0, 1.0, False, "in [0, 1]"),
    ("latencyMs", "LatencyMs", 0.0, math.inf, False, ">= 0"),
    ("llmCalls", "LLMCalls", 0.0, math.inf, False, ">= 0"),
    ("alpha", "Alpha", 0.0, 1.0, True, "in (0, 1]"),
)


def check_observation(section: Any, fields: dict[str, Any], report: Callable[[int, str, str], None]) -> None:
    """Scores in [0, 1], costs >= 0, the EWMA weight in (0, 1]; the task an act or `act/answer type` (the
    kernel keeps a record per task: a bounded vocabulary)."""
    task = fields.get("task")
    if task is not None:
        act, _, kind = task.partition("/")
        if act not in ACTS or ("/" in task and kind not in ANSWER_TYPES):
            report(
                section.lines["Task"],
                "observation-task",
                f"Task '{task}' must be an act or act/answer type (e.g. describe/number)",
            )
    for attr, name, low, high, open_low, bounds in _OBSERVATION_RANGES:
        value = fields.get(attr)
        if value is not None and ((value <= low if open_low else value < low) or value > high):
            report(section.lines[name], "observation-range", f"{name} must be {bounds}")
