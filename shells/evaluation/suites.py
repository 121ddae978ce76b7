"""Suite folders for `mrpvm eval` (DS021): eval.json, the story, plugin combos and `--combo` pins."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import msgspec
from mrpvm.kernel.errors import BadInput
from mrpvm.protocol.envelope import Pins

EVAL_FILE = "eval.json"
DEFAULT_STORY = "story.nl"
DEFAULT_INGEST_SD = "sd-symbolic"
COMBO_STAGES = ("sd", "kb", "gs")
ENGINE_COMBO = "engine"


class SuiteError(BadInput, code="BAD_SUITE"):
    """A suite folder that cannot be evaluated (missing, no eval.json, invalid eval.json, no story)."""


# --------------------------------------------------------------------------- suite files


class ExpectedIntent(msgspec.Struct, kw_only=True):
    intentMustMention: list[str] = []
    orderIndependent: bool = True


class Expected(msgspec.Struct, kw_only=True):
    intents: list[ExpectedIntent] = []
    contextMustMention: list[str] = []
    contextMustNotMention: list[str] = []
    answerMustMention: list[str] = []
    answerMustNotContain: list[str] = []
    # How long a good answer needs to be: a passing answer that fits passes *strict*.
    answerMaxChars: Annotated[int, msgspec.Meta(gt=0)] | None = None


class EvalQuestion(msgspec.Struct, kw_only=True):
    id: str
    input: str
    expected: Expected = msgspec.field(default_factory=Expected)


class PluginCombo(msgspec.Struct, kw_only=True):
    """One plugin choice a suite wants compared (`mrpvm eval --matrix`); an absent stage is the engine's."""

    label: str = ""
    plannerPlugin: str | None = None
    seedDetectorPlugin: str | None = None
    kbPlugin: str | None = None
    goalSolverPlugin: str | None = None
    validatorPlugin: str | None = None
    # Plugins switched off for this run (e.g. ["val-llm"]: no validator at all), beside the pins.
    disabledPlugins: list[str] = []

    def pins(self) -> Pins:
        return Pins(
            planner=self.plannerPlugin,
            sd=self.seedDetectorPlugin,
            kb=self.kbPlugin,
            gs=self.goalSolverPlugin,
            val=self.validatorPlugin,
        )

    def name(self) -> str:
        """The label, else the pinned plugin ids joined (and the switched-off ones)."""
        chosen = [
            p
            for p in (
                self.plannerPlugin,
                self.seedDetectorPlugin,
                self.kbPlugin,
                self.goalSolverPlugin,
                self.validatorPlugin,
            )
            if p
        ]
        chosen += [f"no {p}" for p in self.disabledPlugins]
        return self.label or "+".join(chosen) or ENGINE_COMBO


class SuiteSpec(msgspec.Struct, kw_only=True):
    """eval.json. Unknown keys are tolerated (suites may carry notes for humans)."""

    suiteId: str
    questions: list[EvalQuestion]
    title: str = ""
    description: str = ""
    storyFile: str = DEFAULT_STORY
    ingestProcessingMode: str | None = None
    ingestSeedDetectorPlugin: str | None = None
    pluginCombos: list[PluginCombo] = []


@dataclass(slots=True)
class Suite:
    folder: Path
    spec: SuiteSpec
    story: str
    story_name: str


def load_suite(folder: Path | str) -> Suite:
    """Read and check one suite folder; every problem is a one-line `SuiteError`."""
    folder = Path(folder)
    if not folder.exists():
        raise SuiteError(f"suite folder not found: {folder}")
    if not folder.is_dir():
        raise SuiteError(f"not a suite folder (a file): {folder}")
    path = folder / EVAL_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SuiteError(f"{folder}: no {EVAL_FILE}") from None
    except OSError as err:
        raise SuiteError(f"{path}: cannot read ({err.strerror})") from None
    try:
        spec = msgspec.json.decode(raw, type=SuiteSpec)
    except msgspec.ValidationError as err:
        raise SuiteError(f"{path}: invalid suite: {err}") from None
    except msgspec.DecodeError as err:
        raise SuiteError(f"{path}: not valid JSON ({err})") from None
    problems = _spec_problems(spec)
    if problems:
        raise SuiteError(f"{path}: invalid suite: {'; '.join(problems)}")
    story_path = folder / spec.storyFile
    if folder.resolve() not in story_path.resolve().parents:
        raise SuiteError(f"{path}: storyFile {spec.storyFile!r} is outside the suite folder")
    try:
        story = story_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(f"{folder}: story file {spec.storyFile} not found") from None
    except UnicodeDecodeError:
        raise SuiteError(f"{story_path}: not UTF-8 text") from None
    except OSError as err:
        raise SuiteError(f"{story_path}: cannot read ({err.strerror})") from None
    if not story.strip():
        raise SuiteError(f"{story_path}: the story is empty")
    return Suite(folder=folder, spec=spec, story=story, story_name=story_path.name)


def _spec_problems(spec: SuiteSpec) -> list[str]:
    problems = []
    if not spec.suiteId.strip():
        problems.append("suiteId is empty")
    if not spec.questions:
        problems.append("no questions")
    seen: set[str] = set()
    labels = [c.name() for c in spec.pluginCombos]
    if ENGINE_COMBO in labels or len(set(labels)) != len(labels):
        problems.append(f"pluginCombos labels must be distinct and not {ENGINE_COMBO!r}")
    for n, q in enumerate(spec.questions, 1):
        if not q.id.strip():
            problems.append(f"question {n} has an empty id")
        elif q.id in seen:
            problems.append(f"question id {q.id!r} is repeated")
        seen.add(q.id)
        if not q.input.strip():
            problems.append(f"question {q.id or n} has an empty input")
    return problems


def parse_combo(text: str | None) -> Pins:
    """`SD,KB,GS` → pins; an empty part or `-` leaves that stage to the engine."""
    if text is None:
        return Pins()
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(COMBO_STAGES):
        raise BadInput("BAD_COMBO", f"--combo takes SD,KB,GS (three plugin ids), got {text!r}")
    return Pins(
        **{stage: (p if p and p != "-" else None) for stage, p in zip(COMBO_STAGES, parts, strict=True)}
    )
