"""Evaluation suites (DS021): `mrpvm eval DIR...` — suite folders, scoring, and the runner."""

from mrpvm.shells.evaluation.results import QuestionResult, SuiteResult
from mrpvm.shells.evaluation.runner import EvalReport, report_json, run_eval
from mrpvm.shells.evaluation.scoring import (
    Score,
    Totals,
    expects_refusal,
    is_refusal,
    mentions,
    normalize,
    score,
    totals,
)
from mrpvm.shells.evaluation.suite_run import answer_text, evaluate_suite, evidence_texts, unit_text
from mrpvm.shells.evaluation.suites import (
    EvalQuestion,
    Expected,
    ExpectedIntent,
    PluginCombo,
    Suite,
    SuiteError,
    SuiteSpec,
    load_suite,
    parse_combo,
)

__all__ = [
    "EvalQuestion",
    "EvalReport",
    "Expected",
    "ExpectedIntent",
    "PluginCombo",
    "QuestionResult",
    "Score",
    "Suite",
    "SuiteError",
    "SuiteResult",
    "SuiteSpec",
    "Totals",
    "answer_text",
    "evaluate_suite",
    "evidence_texts",
    "expects_refusal",
    "is_refusal",
    "load_suite",
    "mentions",
    "normalize",
    "parse_combo",
    "report_json",
    "run_eval",
    "score",
    "totals",
    "unit_text",
]
