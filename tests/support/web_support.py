"""A real Chromium for the web app's tests: Debian's `chromium` driven by Playwright for Python.

Playwright's own browser download is never used: the browser is the system executable (`MRPVM_CHROMIUM`,
else the first of chromium, chromium-browser, google-chrome on PATH), started headless with a fresh
profile (Playwright's temporary one) and without background networking (the machine's network is closed). `browser_or_skip` skips
with the reason when no browser or no Playwright is installed (`.ci/run` installs both).

Screenshots go to tests/artifacts/web/ (gitignored), one per page a test checks, named after the test
and the viewport: `WIDE` (1280×800) and `PHONE` (390×844).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mrpvm.kernel.trace import TraceRecorder

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "web"
WIDE = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tessel-build.md"


def chromium_path() -> str | None:
    given = os.environ.get("MRPVM_CHROMIUM")
    if given:
        return given if Path(given).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_or_skip() -> Iterator[Any]:
    """A launched headless Chromium (a Playwright Browser) for a test module, or a skip saying why."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (make setup installs it; .ci/run runs make test)")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium is installed (.ci/run installs Debian's chromium; or set MRPVM_CHROMIUM)")
    with sync_playwright() as playwright:  # launch() gives the browser a fresh temporary profile
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def shot(page: Any, name: str) -> Path:
    """Save a screenshot of what the page shows now under tests/artifacts/web/<name>.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 1000
    return path


class PageLog:
    """Console errors, uncaught page errors and failed responses of a page (a test asserts there were none),
    and every request to another origin than the daemon's (`foreign`: the app works offline)."""

    def __init__(self, page: Any, origin: str):
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("request", lambda r: None if r.url.startswith(origin) else self.foreign.append(r.url))
        page.on("pageerror", lambda err: self.errors.append(f"page error: {err}"))
        page.on(
            "console", lambda msg: self.errors.append(f"console: {msg.text}") if msg.type == "error" else None
        )
        page.on(
            "response",
            lambda r: (
                self.errors.append(f"HTTP {r.status} {r.request.method} {r.url}") if r.status >= 400 else None
            ),
        )


def open_page(
    browser: Any, url: str, viewport: dict[str, int] = WIDE, **context: Any
) -> tuple[Any, Any, PageLog]:
    """A fresh context (its own sessionStorage) and page at `url`, waiting until the app has booted."""
    ctx = browser.new_context(viewport=viewport, **context)
    page = ctx.new_page()
    log = PageLog(page, url.split("/?", 1)[0].rstrip("/") + "/")
    page.goto(url)
    page.wait_for_selector("body.ready", timeout=20_000)
    return ctx, page, log


def ingest_example(http: httpx.Client, kb: str, text: str | None = None, name: str = EXAMPLE.name) -> dict:
    """Create KB `kb` and ingest a document into it through the daemon (a session mounts it to ingest)."""
    assert http.post("/kbs", json={"name": kb}).status_code == 201
    session = http.post("/sessions", json={"kb": kb}).json()["session_id"]
    reply = http.post(
        f"/sessions/{session}/workspace/sources",
        json={"text": text if text is not None else EXAMPLE.read_text(encoding="utf-8"), "source_name": name},
    )
    assert reply.status_code == 200, reply.text
    http.delete(f"/sessions/{session}")
    return reply.json()


def ask(page: Any, question: str, timeout: float = 60_000) -> Any:
    """Type a question, send it, wait for its answer; returns that turn's <article> (by its request id)."""
    before = page.locator("article.turn .turn-meta").count()
    page.fill("#message", question)
    page.press("#message", "Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('article.turn .turn-meta').length > n", arg=before, timeout=timeout
    )
    request = page.locator("article.turn").last.get_attribute("data-request")
    assert request and request.startswith("req_")
    return page.locator(f"article.turn[data-request='{request}']")


def _calls(rec: TraceRecorder, parent: str, frame: str, depth: int, seeds: int, child_seeds: int) -> None:
    """One frame's branch: plans, detection, seeds with kb backtracking, solve/validate, child frames."""
    branch = rec.node(
        "branch", "planner planner-default", parent=parent, frameId=frame, pluginId="planner-default"
    )
    for label, plugin, op in (
        ("plan pre-seed", "planner-default", "buildPlan"),
        ("detect seeds", "sd-symbolic", "detectSeeds"),
    ):
        node = rec.plugin_node(label, branch.id, frame, plugin, "x", op, {"prompt": label})
        rec.complete(node, "success", 3.0, {"cnl": f"## Plugin Result\nStatus: success\nPlugin: {plugin}\n"})
    for index in range(seeds):
        seed = rec.node(
            "seed", f"intent-{index + 1} explain: part {index + 1}", parent=branch.id, frameId=frame
        )
        previous = None
        for kb, status in (
            ("kb-fast", "insufficient"),
            ("kb-balanced", "insufficient"),
            ("kb-thinkingdb", "success"),
        ):
            node = rec.plugin_node(
                f"retrieve intent-{index + 1}", seed.id, frame, kb, "kb-plugin", "retrieve", {"prompt": "q"}
            )
            rec.complete(node, status, 5.0, {"cnl": f"## Plugin Result\nStatus: {status}\nPlugin: {kb}\n"})
            rec.edge(previous, node.id, "next-candidate")
            previous = node.id
        view = rec.node("event", "knowledge view 1", parent=seed.id, frameId=frame, status="sufficient")
        rec.edge(previous, view.id, "produces")
        first = rec.plugin_node(
            f"solve intent-{index + 1}", view.id, frame, "gs-llm-fast", "gs-plugin", "solve", {"prompt": "q"}
        )
        for call in range(2):
            rec.llm_call(
                parent=first.id,
                frame_id=frame,
                plugin_id="gs-llm-fast",
                model="m",
                status="success",
                duration_ms=40.0 + call,
            )
        rec.complete(
            first,
            "success",
            90.0,
            {"llmCalls": 2, "cnl": "## Plugin Result\nStatus: success\nPlugin: gs-llm-fast\n"},
        )
        check = rec.plugin_node(
            "validate", first.id, frame, "val-llm", "val-plugin", "validate", {"prompt": "q"}
        )
        rec.complete(check, "rejected", 12.0, {"result": "not grounded"})
        rec.edge(check.id, first.id, "validates")
        second = rec.plugin_node(
            f"solve intent-{index + 1}", view.id, frame, "gs-symbolic", "gs-plugin", "solve", {"prompt": "q"}
        )
        rec.complete(
            second,
            "success",
            7.0,
            {"answer": "a", "cnl": "## Plugin Result\nStatus: success\nPlugin: gs-symbolic\n"},
        )
        rec.edge(first.id, second.id, "next-candidate")
        if depth == 0 and index % 2 == 0:
            child = rec.node(
                "frame",
                "child frame",
                parent=seed.id,
                frameId=f"{frame}.{index}",
                status="success",
                input={"depth": depth + 1},
            )
            rec.edge(second.id, child.id, "decomposes")
            _calls(rec, child.id, f"{frame}.{index}", depth + 1, child_seeds, child_seeds)
            rec.finish(child, "success")
        rec.finish(seed, "success")
    rec.finish(branch, "success")


def big_trace(request_id: str, session_id: str, seeds: int = 10, child_seeds: int = 3) -> dict:
    """A synthetic turn trace: `seeds` questions, each with kb backtracking (2 insufficient retrieves),
    an LLM solve (2 LLM calls) its validator rejects, a symbolic solve that succeeds, and, for every
    other question, a child frame of `child_seeds` questions of the same shape (10 seeds: 274 nodes)."""
    rec = TraceRecorder(request_id, session_id)
    root = rec.node("frame", "root frame", frameId="f0", input={"depth": 0, "maxDepth": 3})
    _calls(rec, root.id, "f0", 0, seeds, child_seeds)
    rec.finish(root, "success")
    return rec.to_builtins()
