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

ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "web"
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
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tessel-build.md"


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
    """Console errors and uncaught page errors of a page (a test asserts there were none)."""

    def __init__(self, page: Any):
        self.errors: list[str] = []
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
    log = PageLog(page)
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
