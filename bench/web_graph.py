"""How long the web app takes to show a turn's execution graph, by trace size, in a real Chromium.

Starts `mrpvm serve` (a temp MRPVM_HOME), commits synthetic turns of growing size into its store (the
shape of tests/web_support.big_trace: questions with kb backtracking, a rejected LLM answer, a symbolic
answer, a child frame for every other question), opens each turn's deep link and times, from the
browser's side: the first drawing (child frames auto-collapsed past 120 boxes), "Expand all" (every
box), "Collapse seeds". Each figure is the median of `--repeat` runs; it includes the elkjs layout in its
Web Worker, the SVG drawing and Playwright's round trip (a few ms).

    .venv/bin/python bench/web_graph.py [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from api_support import Daemon  # noqa: E402
from mrpvm.kernel.records import TurnRecord  # noqa: E402
from mrpvm.kernel.store import Store  # noqa: E402
from web_support import CHROMIUM_ARGS, WIDE, big_trace, chromium_path  # noqa: E402

SIZES = ((4, 2), (10, 3), (25, 4), (50, 4), (100, 4))  # (questions, questions per child frame)


def commit(home: Path, session: str, request: str, seeds: int, child_seeds: int) -> int:
    trace = big_trace(request, session, seeds, child_seeds)
    store = Store.open(home)
    try:
        store.commit_turn(
            TurnRecord(requestId=request, sessionId=session, userMessage=f"{seeds} questions", trace=trace),
            [],
        )
    finally:
        store.close()
    return len(trace["nodes"])


def timed(page, action) -> float:
    before = int(page.locator(".graph-svg").get_attribute("data-layouts") or 0)
    started = time.perf_counter()
    action()
    page.wait_for_function(
        f"() => Number(document.querySelector('.graph-svg').dataset.layouts || 0) > {before}", timeout=120_000
    )
    return (time.perf_counter() - started) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    executable = chromium_path()
    if executable is None:
        print("web_graph: skipped, no Chromium installed (apt-get install chromium)", file=sys.stderr)
        return 0
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, Daemon(Path(tmp) / "home") as daemon:
        with daemon.client() as http:
            session = http.post("/sessions", json={}).json()["session_id"]
        turns = []
        for index, (seeds, child) in enumerate(SIZES):
            request = f"req_bench{index:011d}"
            turns.append((request, commit(daemon.home, session, request, seeds, child)))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
            page = browser.new_page(viewport=WIDE)
            for request, nodes in turns:
                first, expand, collapse = [], [], []
                boxes = {}
                for _ in range(args.repeat):
                    page.goto(f"{daemon.url}/?session={session}")
                    page.wait_for_selector("body.ready")
                    started = time.perf_counter()
                    page.goto(f"{daemon.url}/?session={session}&turn={request}")
                    page.wait_for_function(
                        f"() => document.querySelector('.graph-svg')?.dataset.request === '{request}'",
                        timeout=120_000,
                    )
                    first.append((time.perf_counter() - started) * 1000.0)
                    boxes["first"] = int(page.locator(".graph-svg").get_attribute("data-boxes"))
                    expand.append(
                        timed(page, lambda: page.get_by_role("button", name="Expand everything").click())
                    )
                    boxes["all"] = int(page.locator(".graph-svg").get_attribute("data-boxes"))
                    collapse.append(
                        timed(page, lambda: page.get_by_role("button", name="Collapse every seed").click())
                    )
                rows.append(
                    {
                        "trace_nodes": nodes,
                        "boxes_first": boxes["first"],
                        "boxes_all": boxes["all"],
                        "open_ms": round(statistics.median(first), 1),
                        "expand_all_ms": round(statistics.median(expand), 1),
                        "collapse_seeds_ms": round(statistics.median(collapse), 1),
                    }
                )
            browser.close()
    if args.json:
        print(json.dumps({"web_graph": rows}))
        return 0
    print(
        f"{'trace nodes':>11} {'boxes':>11} {'open (page load + layout)':>26} {'expand all':>11} {'collapse seeds':>15}"
    )
    for row in rows:
        print(
            f"{row['trace_nodes']:>11} {row['boxes_first']:>5}/{row['boxes_all']:<5} {row['open_ms']:>23.0f} ms"
            f" {row['expand_all_ms']:>8.0f} ms {row['collapse_seeds_ms']:>12.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
