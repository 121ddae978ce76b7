"""How honest `success` is on questions the evidence cannot answer, made from the development suites.

Two kinds of negatives, built from `../shared/eval/real01-10` and `eval/dev/dev01-04` (never the held-out
suites) so that the precision of `success` can be measured on more than the few unanswerable questions the
suites hold:
- **cross-document**: every answerable question of a suite asked of another document of the same genre
  (a man page's questions of another man page, a changelog's of another changelog); any answer is false;
- **answer removed**: each question that the intact document answers right with `success`, asked again of
  the document without the lines that hold its expected answer (each `answerMustMention` string); an answer
  marked `success` that no longer holds it is a false success (the passage that remains repeats the
  question's words without the asked detail). Removing lines cuts a hard-wrapped sentence in two (a fragment
  that no real document holds); `--paragraphs` removes the whole paragraphs instead (the document no longer
  speaks of the asked detail at all).

Prints, per kind, the questions asked, refused, answered and answered with `success`, and how many of those
are right. Runs `mrpvm eval` in a fresh home (about 2 minutes on 2 cores).

    .venv/bin/python bench/status_negatives.py [--json] [--paragraphs] [--details FILE]

`--details FILE` writes every question asked, per kind, with its answer and status (JSON), to study which
false successes remain.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "eval"
DEV = ROOT / "eval" / "dev"
# documents of one genre, each suite's questions asked of the other's document
PAIRS = [
    ("real01", "real05"),  # man pages
    ("real03", "real08"),  # changelogs
    ("real02", "real09"),  # build / install how-tos
    ("real04", "real10"),  # policies / PEPs
    ("real06", "real07"),  # README / FAQ
    ("dev01", "dev03"),  # Python docs in reStructuredText
    ("dev02", "dev04"),  # contributing guide / annotated config
]
REFUSAL = "not contain enough evidence"
MAX_REMOVED_SHARE = 0.2  # a question whose expected strings are on more lines than this is left out


def _folder(suite: str) -> Path:
    return SHARED / suite if suite.startswith("real") else DEV / suite


def _spec(suite: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((_folder(suite) / "eval.json").read_text())
    return spec


def _story(suite: str) -> str:
    return (_folder(suite) / _spec(suite).get("storyFile", "story.nl")).read_text()


def _answerable(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [q for q in spec["questions"] if REFUSAL not in (q["expected"].get("answerMustMention") or [])]


def _write(folder: Path, name: str, story: str, questions: list[dict[str, Any]]) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "story.nl").write_text(story)
    spec = {"suiteId": name, "title": name, "storyFile": "story.nl", "questions": questions}
    (folder / name / "eval.json").write_text(json.dumps(spec))


def _eval(folders: list[Path], home: Path) -> list[dict[str, Any]]:
    mrpvm = ROOT / ".venv" / "bin" / "mrpvm"
    env = {**os.environ, "MRPVM_HOME": str(home)}
    run = subprocess.run(
        [str(mrpvm), "eval", *map(str, folders), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return [q for s in json.loads(run.stdout)["suites"] for q in s["questions"]]


def _without_answer(story: str, must: list[str], paragraphs: bool = False) -> str | None:
    """The story without the lines holding any expected string (short ones as whole words), or with
    `paragraphs` without the whole blocks (lines between blank lines) holding one, so no sentence is cut in
    two; None when none or too many lines hold one."""
    lines = story.split("\n")

    def holds(line: str) -> bool:
        low = line.lower()
        for m in (s.lower() for s in must):
            if len(m) >= 4 and m in low:
                return True
            if len(m) < 4 and re.search(r"(?<![\w.])" + re.escape(m) + r"(?!\w)", low):
                return True
        return False

    gone = {i for i, ln in enumerate(lines) if holds(ln)}
    if paragraphs:
        for i in list(gone):
            for step in (-1, 1):
                j = i + step
                while 0 <= j < len(lines) and lines[j].strip():
                    gone.add(j)
                    j += step
    kept = [ln for i, ln in enumerate(lines) if i not in gone]
    removed = len(lines) - len(kept)
    return "\n".join(kept) if 0 < removed <= len(lines) * MAX_REMOVED_SHARE else None


def _counts(questions: list[dict[str, Any]]) -> dict[str, int]:
    success = [q for q in questions if q["status"] == "success"]
    return {
        "asked": len(questions),
        "refused": sum(q["refused"] for q in questions),
        "answered": sum(not q["refused"] for q in questions),
        "success": len(success),
        "successRight": sum(q["answerPass"] for q in success),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument(
        "--paragraphs",
        action="store_true",
        help="answer removed: remove the whole paragraphs holding the expected strings (no sentence cut)",
    )
    parser.add_argument("--details", type=Path, help="write each kind's questions and answers here (JSON)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="negatives-"))
    try:
        cross: list[Path] = []
        for a, b in PAIRS:
            for asker, teller in ((a, b), (b, a)):
                qs = [
                    {"id": f"x{q['id']}", "input": q["input"], "expected": {"answerMustMention": [REFUSAL]}}
                    for q in _answerable(_spec(asker))
                ]
                _write(work / "cross", f"x_{asker}_on_{teller}", _story(teller), qs)
                cross.append(work / "cross" / f"x_{asker}_on_{teller}")
        suites = sorted({s for pair in PAIRS for s in pair})
        intact = {q["id"]: q for q in _eval([_folder(s) for s in suites], work / "home1")}
        removed: list[Path] = []
        for suite in suites:
            story = _story(suite)
            for q in _answerable(_spec(suite)):
                done = intact.get(q["id"])
                if not done or done["status"] != "success" or not done["answerPass"]:
                    continue
                variant = _without_answer(
                    story, q["expected"].get("answerMustMention") or [], args.paragraphs
                )
                if variant is not None:
                    _write(work / "removed", f"a_{q['id']}", variant, [q])
                    removed.append(work / "removed" / f"a_{q['id']}")
        asked = {
            "crossDocument": _eval(cross, work / "home2"),
            "answerRemoved": _eval(removed, work / "home3"),
        }
        figures = {kind: _counts(qs) for kind, qs in asked.items()}
        if args.details:
            args.details.write_text(json.dumps(asked, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for kind, c in figures.items():
        print(
            f"{kind:14} asked {c['asked']:3}  refused {c['refused']:3}  answered {c['answered']:3}  "
            f"success {c['success']:3} (right {c['successRight']})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
