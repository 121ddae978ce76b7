"""Can a calibrated decision tell right `success` answers from wrong ones better than gs-symbolic's rules?

Dumps, for every question of `../shared/eval/real01-10` and `eval/dev/dev01-13` (never the held-out suites),
the figures gs-symbolic already reports for the answer the engine kept (read from the turn's trace: its
status, confidence, term coverage, meaning cosine, the sentences quoted, the reasons it appended, which
knowledge view it answered from and how many it tried), the question and the answer, and whether the answer
was right (`answerPass`).
With `--negatives` it adds the answer-removed questions of bench/status_negatives.py, over all 23 suites
(`--forms paragraphs`, the default: the intact document's right `success` answers asked again without the
paragraphs that hold them; `lines`: without the lines only; `paragraphs,lines`: both), whose `success`
answers are the wrong ones the suites have too few of. `--intact ROWS` keeps the suite rows of an earlier
dump and asks only the negatives (a few minutes instead of the whole eval).

`--fit` then compares, fold by fold (leave one suite out; an answer-removed question belongs to its own
suite's fold), today's rule (`success` as reported) with a calibrated gate on it: a logistic regression over
the features gs-symbolic itself reports (FEATURES; `--features` to choose), fitted on the other folds, whose
threshold keeps 90-100% of the other folds' right `success` answers; and the same with a single re-chosen
cosine threshold. It prints pooled precision of `success`, right `success` answers lost, wrong ones demoted
and the net (demoted - lost), per part (suites, each answer-removed form), and the AUC of each score. No
run-time fitting: this is the bench that would refit stored coefficients.

    .venv/bin/python bench/status_features.py [--negatives [--forms paragraphs,lines]] [--out rows.jsonl] [--fit]
    .venv/bin/python bench/status_features.py --rows rows.jsonl --fit [--features coverage,meaning]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from status_negatives import _answerable, _eval, _folder, _spec, _story, _without_answer, _write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MRPVM = ROOT / ".venv" / "bin" / "mrpvm"
SUITES = [f"real{n:02d}" for n in range(1, 11)] + [f"dev{n:02d}" for n in range(1, 18)]
CONFIDENCE = {"high": 1.0, "medium": 2 / 3, "low": 1 / 3, "0.2": 0.2}
# what gs-symbolic itself knows of its answer; "view" (which knowledge view answered) is dumped but is the
# kernel's fact, not gs-symbolic's, so a gate gs-symbolic could apply leaves it out (`--features` to add it)
FEATURES = ["coverage", "meaning", "margin", "confidence", "sentences", "reasons", "log_chars"]
# a gate's threshold keeps this share of the training folds' right answers
KEEP_RIGHT = (0.9, 0.95, 0.98, 0.99, 1.0)
_COVERAGE = re.compile(r"(?:term )?coverage (\d\.\d+)")
_MEANING = re.compile(r"meaning (-?\d\.\d+)")
_MARGIN = re.compile(r"margin (\d\.\d+)")
_LEAD = re.compile(r"meaning lead (-?\d\.\d+)")
_WORDS = re.compile(r"words lead (-?\d\.\d+)")
_SENTENCES = re.compile(r"^(\d+) (?:sentence|item)")


def _trace(request_id: str, home: Path) -> dict[str, Any]:
    env = {**os.environ, "MRPVM_HOME": str(home)}
    run = subprocess.run(
        [str(MRPVM), "trace", request_id, "-f", "json"], capture_output=True, text=True, env=env, check=True
    )
    trace: dict[str, Any] = json.loads(run.stdout)
    return trace


def features(q: dict[str, Any], trace: dict[str, Any]) -> dict[str, Any]:
    """The figures of the gs-symbolic reply whose answer the engine kept (the last one giving it)."""
    solves = [n for n in trace["nodes"] if n.get("pluginId") == "gs-symbolic" and n.get("op") == "solve"]
    kept = [n for n in solves if (n.get("output") or {}).get("answer", "").strip() == q["answer"].strip()]
    node = (kept or solves or [{}])[-1]
    out = node.get("output") or {}
    evidence = str(out.get("evidence") or "")
    cov, mean, sent = _COVERAGE.search(evidence), _MEANING.search(evidence), _SENTENCES.search(evidence)
    return {
        "id": q["id"],
        "status": q["status"],
        "right": bool(q["answerPass"]),
        "strict": bool(q["answerStrictPass"]),
        "expectsRefusal": bool(q["expectsRefusal"]),
        "refused": bool(q["refused"]),
        "coverage": float(cov.group(1)) if cov else 0.0,
        "meaning": float(mean.group(1)) if mean else None,
        "margin": float(marg.group(1)) if (marg := _MARGIN.search(evidence)) else 1.0,
        "lead": float(lead.group(1)) if (lead := _LEAD.search(evidence)) else None,
        "words": float(w.group(1)) if (w := _WORDS.search(evidence)) else None,
        "confidence": CONFIDENCE.get(str(out.get("confidence")), 0.0),
        "sentences": int(sent.group(1)) if sent else 0,
        "view": solves.index(node) if node in solves else -1,
        "tried": len(solves),
        "reasons": evidence.count(";"),  # a reason appended to a weak answer
        "log_chars": math.log1p(len(q["answer"])),
        "evidence": evidence,
        "question": q.get("input", ""),
        "answer": q["answer"],
    }


def dump(
    negatives: bool,
    done: tuple[Path, Path] | None = None,
    forms: tuple[str, ...] = ("paragraphs",),
    intact_rows: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Rows of every question; `done` is an earlier `mrpvm eval --json` of SUITES and the home it ran in;
    `intact_rows` an earlier dump whose suite rows are kept as they are (only the negatives are asked);
    `forms` the answer-removed variants asked ("paragraphs", "lines" or both)."""
    work = Path(tempfile.mkdtemp(prefix="status-features-"))
    try:
        if intact_rows is not None:
            rows = [r for r in intact_rows if not r["id"].startswith("removed")]
            right_success = {r["id"] for r in rows if r["status"] == "success" and r["right"]}
        else:
            if done:
                home = done[1]
                asked = [q for s in json.loads(done[0].read_text())["suites"] for q in s["questions"]]
            else:
                home = work / "home"
                asked = _eval([_folder(s) for s in SUITES], home)
            rows = [{**features(q, _trace(q["requestId"], home)), "fold": _fold(q["id"])} for q in asked]
            right_success = {q["id"] for q in asked if q["status"] == "success" and q["answerPass"]}
        if negatives:
            rows += _negatives(work, right_success, forms)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def _negatives(work: Path, right_success: set[str], forms: tuple[str, ...]) -> list[dict[str, Any]]:
    """The answer-removed questions: each right `success` answer's question asked again of its document
    without the lines (or paragraphs) holding the expected answer; every row is labelled by the eval."""
    removed: list[Path] = []
    for form in forms:
        for suite in SUITES:
            for q in _answerable(_spec(suite)):
                if q["id"] not in right_success:
                    continue
                must = q["expected"].get("answerMustMention") or []
                variant = _without_answer(_story(suite), must, form == "paragraphs")
                if variant is not None:
                    _write(work / form, f"a_{q['id']}", variant, [q])
                    removed.append(work / form / f"a_{q['id']}")
    home = work / "home2"
    rows = []
    for folder, q in zip(removed, _eval(removed, home), strict=True):
        row = features(q, _trace(q["requestId"], home))
        tag = "removed" if folder.parent.name == "paragraphs" else "removed-lines"
        rows.append({**row, "id": f"{tag}:{q['id']}", "fold": _fold(q["id"])})
    return rows


def _fold(qid: str) -> str:
    return qid.split("-")[0]


def _matrix(rows: list[dict[str, Any]]) -> np.ndarray:
    """Features of each row; a missing cosine (no model reading) counts as the mean of the others."""
    known = [r["meaning"] for r in rows if r["meaning"] is not None]
    fill = float(np.mean(known)) if known else 0.0
    return np.array(
        [[fill if r.get(f) is None else float(r[f]) for f in FEATURES] for r in rows], dtype=float
    )


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000) -> np.ndarray:
    """Weights (bias last) of an L2-regularised logistic regression on standardised features, by
    gradient descent; deterministic."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0] / len(y)
        w -= 0.5 * grad
    return np.r_[w[:-1] / sd, w[-1] - (w[:-1] * mu / sd).sum()]


def score(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-(x @ w[:-1] + w[-1]))))


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    pos, neg = scores[y == 1], scores[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    wins = sum(float((p > neg).sum() + 0.5 * (p == neg).sum()) for p in pos)
    return wins / (len(pos) * len(neg))


def _threshold(scores: np.ndarray, y: np.ndarray, keep: float) -> float:
    right = np.sort(scores[y == 1])
    return float(right[int(math.floor((1 - keep) * len(right)))]) if len(right) else 0.0


def _labels(rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([1.0 if r["right"] else 0.0 for r in rows])


def evaluate(rows: list[dict[str, Any]], train_on: str = "success") -> None:
    """Leave one suite out: fit on the other folds' `success` answers (or every answer given, `answered`:
    weak ones too), gate this fold's `success` answers; print the pooled figures per operating point."""
    succ = [r for r in rows if r["status"] == "success"]
    pool = succ if train_on == "success" else [r for r in rows if not r["refused"]]
    x, y = _matrix(succ), _labels(succ)
    xp, yp = _matrix(pool), _labels(pool)
    folds = sorted({r["fold"] for r in succ})
    cos = np.array([r["meaning"] if r["meaning"] is not None else 1.0 for r in succ])
    cos_pool = np.array([r["meaning"] if r["meaning"] is not None else 1.0 for r in pool])
    held = np.zeros(len(succ))
    kept: dict[str, np.ndarray] = {"today": np.ones(len(succ), bool)}
    for keep in KEEP_RIGHT:
        kept[f"logistic@{keep:.2f}"] = np.ones(len(succ), bool)
        kept[f"cosine@{keep:.2f}"] = np.ones(len(succ), bool)
    for fold in folds:
        test = np.array([r["fold"] == fold for r in succ])
        train = np.array([r["fold"] != fold for r in pool])
        if yp[train].min() == yp[train].max():
            continue
        w = fit_logistic(xp[train], yp[train])
        held[test] = score(w, x[test])
        for keep in KEEP_RIGHT:
            cut = _threshold(score(w, xp[train]), yp[train], keep)
            kept[f"logistic@{keep:.2f}"][test] = held[test] >= cut
            kept[f"cosine@{keep:.2f}"][test] = cos[test] >= _threshold(cos_pool[train], yp[train], keep)
    intact = np.array([not r["id"].startswith("removed") for r in succ])
    print(
        f"success answers: {len(succ)} ({int(y.sum())} right), {len(folds)} folds; trained on {train_on} "
        f"({len(pool)} rows); features {', '.join(FEATURES)}"
    )
    lines = np.array([r["id"].startswith("removed-lines:") for r in succ])
    parts = [("suites", intact), ("answer removed", ~intact & ~lines), ("answer removed (lines)", lines)]
    for part, mask in [*parts, ("all", np.ones(len(succ), bool))]:
        if not mask.any():
            continue
        print(
            f"{part}: AUC of held-out fold scores, logistic {auc(held[mask], y[mask]):.3f}, "
            f"cosine {auc(cos[mask], y[mask]):.3f}"
        )
        for name, gate in kept.items():
            k = gate & mask
            right, total = int(y[k].sum()), int(k.sum())
            lost = int((y[mask] == 1).sum() - right)
            demoted = int(((~gate) & mask & (y == 0)).sum())
            prec = right / total if total else float("nan")
            print(
                f"  {name:15} success {right}/{total} ({prec:.1%})  right lost {lost}  wrong demoted {demoted}"
                f"  net {demoted - lost:+d}"
            )
    w = fit_logistic(xp, yp)
    coef = ", ".join(f"{f} {c:+.3f}" for f, c in zip(FEATURES, w[:-1], strict=True))
    print(f"coefficients on every fold: {coef}, bias {w[-1]:+.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--negatives", action="store_true", help="add the answer-removed (paragraphs) questions"
    )
    parser.add_argument("--out", type=Path, help="write one JSON row per question here")
    parser.add_argument(
        "--rows", type=Path, help="read rows from an earlier --out instead of running the eval"
    )
    parser.add_argument(
        "--eval", type=Path, help="an earlier `mrpvm eval --json` of the suites (with --home)"
    )
    parser.add_argument(
        "--forms", default="paragraphs", help="answer-removed forms, comma separated: paragraphs,lines"
    )
    parser.add_argument(
        "--intact", type=Path, help="keep the suite rows of an earlier --out; ask only the negatives"
    )
    parser.add_argument("--home", type=Path, help="the MRPVM_HOME that earlier eval ran in (its traces)")
    parser.add_argument(
        "--train", choices=("success", "answered"), default="success", help="the rows each fold is fitted on"
    )
    parser.add_argument("--features", help="comma separated features of the gate (default: FEATURES)")
    parser.add_argument("--fit", action="store_true", help="compare today's rule with calibrated gates")
    args = parser.parse_args()
    if args.rows:
        rows = [json.loads(line) for line in args.rows.read_text().splitlines() if line.strip()]
    else:
        intact = (
            [json.loads(line) for line in args.intact.read_text().splitlines() if line.strip()]
            if args.intact
            else None
        )
        done = (args.eval, args.home) if args.eval and args.home else None
        rows = dump(args.negatives, done, tuple(args.forms.split(",")), intact)
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if args.fit:
        if args.features:
            FEATURES[:] = args.features.split(",")
        evaluate(rows, args.train)
    elif not args.out:
        for r in rows:
            print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
