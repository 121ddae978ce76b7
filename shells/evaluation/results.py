"""What `mrpvm eval` reports per question and per suite run (DS021)."""

from __future__ import annotations

from mrpvm.shells.evaluation.calibration import JudgedVerdict
from mrpvm.shells.evaluation.scoring import Score, Totals
from mrpvm.shells.evaluation.suites import ENGINE_COMBO


class QuestionResult(Score, kw_only=True):
    id: str
    answer: str
    plugins: dict[str, str]
    status: str = ""
    input: str = ""
    intents: list[str] = []
    evidence: list[str] = []
    requestId: str | None = None
    durationMs: float = 0.0
    llmCalls: int = 0
    verdicts: list[JudgedVerdict] = []  # each validator verdict, scored against this question
    error: str | None = None


class SuiteResult(Totals, kw_only=True):
    suiteId: str
    total: int
    answerPass: int
    contextPass: int
    avgContextF1: float
    questions: list[QuestionResult]
    intentPass: int = 0
    title: str = ""
    folder: str = ""
    sessionId: str = ""
    storyUnits: int = 0
    combo: str = ENGINE_COMBO
    pins: dict[str, str] = {}
    durationMs: float = 0.0
    llmCalls: int = 0  # LLM calls of all its turns (the story load excluded)
    secondsPerTurn: float = 0.0
    warnings: list[str] = []
