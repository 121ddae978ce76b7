"""`mrpvm eval` for the LLM path without a model: the standard combos under --matrix (a combo that switches
val-llm off runs in its own kernel), --only, --combo LABEL, --passes with the planners' records before and
after, and the per-run LLM calls and seconds per turn. (With `--local-llm` the same runs use SmolLM2.)
"""

from __future__ import annotations

import json
from pathlib import Path

from test_eval import OWN_SUITES, run_eval

SUITE = str(OWN_SUITES / "fact_graph")


def test_matrix_runs_the_standard_combos_it_is_asked_for(tmp_path: Path) -> None:
    proc = run_eval(
        tmp_path / "home",
        SUITE,
        "--matrix",
        "--only",
        "symbolic-only",
        "--only",
        "gs-llm-fast",
        "--json",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [r["combo"] for r in report["matrix"]] == ["symbolic-only", "gs-llm-fast"]
    symbolic, llm = report["matrix"]
    assert symbolic["pins"] == {"sd": "sd-symbolic", "gs": "gs-symbolic"}
    assert symbolic["answerStrictPass"] == report["suites"][0]["answerStrictPass"]  # no LLM: the same path
    # no model configured: the pinned LLM solver cannot answer (only refusals pass), and no LLM call is made
    assert llm["answerStrictPass"] == llm["refusedUnanswerable"] < symbolic["answerStrictPass"]
    assert llm["llmCalls"] == 0
    assert all(q["plugins"].get("gs") in (None, "gs-llm-fast") for q in llm["questions"])
    for run in report["matrix"]:
        assert run["secondsPerTurn"] > 0 and all("llmCalls" in q for q in run["questions"])


def test_combo_label_and_unknown_labels(tmp_path: Path) -> None:
    proc = run_eval(tmp_path / "home", SUITE, "--combo", "symbolic-only", "--json", timeout=300)
    assert proc.returncode == 0, proc.stderr
    [suite] = json.loads(proc.stdout)["suites"]
    assert suite["combo"] == "symbolic-only" and suite["pins"] == {"sd": "sd-symbolic", "gs": "gs-symbolic"}
    bad = run_eval(tmp_path / "home", SUITE, "--combo", "gs-llm-slow")
    assert bad.returncode == 2 and "standard combo" in bad.stderr.decode()
    bad = run_eval(tmp_path / "home", SUITE, "--matrix", "--only", "nope")
    assert bad.returncode == 2 and "no plugin combo nope" in bad.stderr.decode()
    bad = run_eval(tmp_path / "home", SUITE, "--matrix", "--passes", "2")
    assert bad.returncode == 2 and "--passes" in bad.stderr.decode()


def test_passes_keep_learning_and_report_the_records_before_and_after(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = run_eval(home, SUITE, "--passes", "2", "--json", timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [p["number"] for p in report["passes"]] == [1, 2]
    assert report["passes"][0]["suites"] == report["suites"]
    assert report["recordsBefore"]["planners"] == {}
    first = report["passes"][0]["recordsAfter"]["planners"]["planner-default"]
    second = report["passes"][1]["recordsAfter"]["planners"]["planner-default"]
    solver = first["plugins"]["gs-symbolic"]
    assert solver["overall"]["samples"] >= 1
    assert (
        second["plugins"]["gs-symbolic"]["overall"]["samples"] > solver["overall"]["samples"]
    )  # learning carried
    assert any("/" in key for key in solver["acts"])  # per act and answer type
    # the home is put back: a new evaluation starts from nothing learned
    again = json.loads(run_eval(home, SUITE, "--passes", "2", "--json", timeout=300).stdout)
    assert again["recordsBefore"]["planners"] == {}
