"""The web app in a real Chromium against a real `mrpvm serve`: ask over an ingested example, see the
answer and its sources, open the turn's execution graph and a plugin call's CNL; upload documents (file
picker and drag and drop) and ask about them; a hostile document renders as text.

Each checked page is saved as a screenshot in tests/artifacts/web/ (at 1280×800 and at 390×844).
"""

from __future__ import annotations

import re

import pytest
from web_support import EXAMPLE, PHONE, WIDE, ask, ingest_example, open_page, shot

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tessel(daemon):
    with daemon.client() as http:
        ingest_example(http, "tessel")
    return "tessel"


def test_ask_over_an_example_see_sources_and_the_graph_with_a_plugin_cnl(browser, daemon, tessel):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={tessel}")
    assert re.search(r"\?session=ses_[0-9a-f]+$", page.url)  # the deep link became the session's own
    assert page.locator("#kb-select").input_value() == tessel
    turn = ask(
        page, "How do I clean a broken cache? And what happens when the needs of two targets form a cycle?"
    )
    groups = turn.locator("section.group")
    assert groups.count() == 2  # one card per question of the turn
    first = groups.nth(0)
    assert "How do I clean a broken cache?" in first.locator(".group-intent").inner_text()
    answer = first.locator(".answer").inner_text()
    assert "Delete the .tessel/cache folder." in answer and "Stop every running tessel process." in answer
    assert first.locator(".answer ol li").count() == 3  # the procedure rendered as a Markdown list
    assert "error" in groups.nth(1).locator(".answer").inner_text()
    source = first.locator("button.source").first
    assert "tessel-build.md › Cleaning a broken cache" in source.inner_text()
    assert first.locator(".pill").first.inner_text() == "success"
    meta = turn.locator(".turn-meta").inner_text()
    # the turn's status: weak when one of its questions is answered only weakly (the second one here)
    assert meta.split("\n")[0] in ("success", "weak") and "kb-fast" in meta and "LLM calls" in meta
    shot(page, "ask-chat-1280")

    source.click()
    dialog = page.locator("#unit-dialog")
    dialog.locator(".unit-text").wait_for()
    assert "Delete the `.tessel/cache` folder." in dialog.locator(".unit-text").inner_text()
    assert dialog.locator("#unit-title").inner_text().startswith("tessel-build.md ›")
    shot(page, "ask-unit-1280")
    page.keyboard.press("Escape")

    request = turn.get_attribute("data-request")
    turn.locator(".graph-button").click()
    page.wait_for_selector(".graph-svg .gnode")
    assert page.url.endswith(f"&turn={request}")
    assert page.locator("#tab-graph").get_attribute("aria-selected") == "true"
    assert page.locator(".gcontainer.kind-frame").count() == 1
    assert page.locator(".gcontainer.kind-seed").count() == 2
    seed_box = page.locator(".gcontainer.kind-seed .cbox").first.bounding_box()
    zoom = float(page.locator(".graph-svg").get_attribute("data-zoom"))
    assert seed_box is not None and seed_box["width"] / zoom >= 299  # containers are at least 300 wide
    assert page.locator(".gnode.kind-plugin.st-success").count() >= 4
    assert page.locator(".gedge").count() >= 3
    assert "plugin calls" in page.locator(".graph-summary").inner_text()
    shot(page, "ask-graph-1280")

    retrieve = page.locator(".gnode.kind-plugin", has_text="kb-fast · retrieve").first
    retrieve.click()
    cnl = page.locator("#inspector pre.cnl")
    cnl.wait_for()
    text = cnl.inner_text()
    assert text.startswith("## Plugin Result\nStatus: ") and "Plugin: kb-fast" in text
    assert "## Resolved Intent 1" in text and "## Context Unit tessel-build" in text
    inspector = page.locator("#inspector").inner_text()
    assert "REQUEST SUMMARY" in inspector.upper() and "How do I clean a broken cache?" in inspector
    assert "selected" in (retrieve.get_attribute("class") or "")
    shot(page, "ask-graph-inspector-1280")
    assert not log.errors, log.errors
    assert log.foreign == []  # nothing but the daemon: no CDN, works offline
    ctx.close()

    # The same turn from its deep link on a phone: the graph opens, a node opens its details.
    ctx, page, log = open_page(browser, page.url, PHONE, is_mobile=True, has_touch=True)
    page.wait_for_selector(".graph-svg .gnode")
    assert page.locator("#view-graph").is_visible() and not page.locator("#sidebar").is_visible()
    assert not page.locator("#inspector").is_visible()  # the details sheet opens with a selection
    shot(page, "ask-graph-390")
    # the first question's solve: the turn's two intents run side by side, so the graph's node order varies
    page.locator('.gnode.kind-plugin[aria-label^="gs-symbolic · solve, solve intent-1,"]').first.click()
    page.locator("#inspector pre.cnl").wait_for()
    assert "## Answer" in page.locator("#inspector pre.cnl").inner_text()
    shot(page, "ask-graph-inspector-390")
    page.click("#tab-chat")
    page.locator("article.turn section.group").first.wait_for()
    box = page.locator("article.turn").first.bounding_box()
    assert box is not None and box["width"] <= PHONE["width"]  # nothing wider than the phone
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, "ask-chat-390")
    page.click("#nav-toggle")
    page.locator("#sidebar .session-item.open").wait_for(state="visible")
    page.wait_for_function("() => getComputedStyle(document.querySelector('#sidebar')).transform === 'none'")
    shot(page, "ask-sessions-390")
    assert not log.errors, log.errors
    ctx.close()


ZORBLAX = "# Zorblax\n\nThe zorblax is a teal bird that lives in Norway.\n\nThe zorblax eats blue fish.\n"
QUUXOL = "Quuxol field notes\n\nThe quuxol engine runs on compressed lavender oil.\n"
FENNIMORE = "# Fennimore\n\n## Harbour\n\nThe fennimore harbour is guarded by a copper lighthouse.\n"


def test_upload_several_documents_by_picker_and_by_drop_then_ask_about_them(browser, daemon):
    ctx, page, log = open_page(browser, f"{daemon.url}/")
    assert "?" not in page.url  # no session is made before it is needed
    page.set_input_files(
        ".kb-bar input[type=file]",
        files=[
            {"name": "zorblax.md", "mimeType": "text/markdown", "buffer": ZORBLAX.encode()},
            {"name": "quuxol.txt", "mimeType": "text/plain", "buffer": QUUXOL.encode()},
        ],
    )
    tray = page.locator("#upload-tray")
    tray.locator("h2", has_text="2 of 2 documents added").wait_for(timeout=30_000)
    assert tray.locator(".upload-row.done").count() == 2
    assert tray.locator("progress.overall").evaluate("p => p.value") == 2
    assert re.search(r"\d+ units", tray.locator(".upload-row.done .upload-note").first.inner_text())
    assert "?session=ses_" in page.url
    shot(page, "upload-picker-1280")
    kb = page.locator("#kb-select").input_value()
    assert kb.startswith("workspace-ses_")  # the session got a workspace KB
    turn = ask(page, "What does the quuxol engine run on?")
    assert "lavender oil" in turn.locator(".answer").first.inner_text()
    assert "quuxol.txt" in turn.locator("button.source").first.inner_text()

    page.click("#tab-knowledge")
    zone = page.locator("#drop-zone")
    zone.wait_for()
    transfer = page.evaluate_handle(
        "([name, text]) => { const t = new DataTransfer(); t.items.add(new File([text], name, {type: 'text/markdown'})); return t; }",
        ["fennimore.md", FENNIMORE],
    )
    zone.dispatch_event("dragenter", {"dataTransfer": transfer})
    assert "dragging" in (zone.get_attribute("class") or "")
    zone.dispatch_event("drop", {"dataTransfer": transfer})
    tray.locator("h2", has_text="1 of 1 document added").wait_for(timeout=30_000)
    sources = page.locator("#kb-sources table")
    sources.locator("td", has_text="fennimore.md").wait_for()
    assert {"zorblax.md", "quuxol.txt", "fennimore.md"} <= set(
        sources.locator("tbody td:first-child").all_inner_texts()
    )
    shot(page, "upload-drop-knowledge-1280")
    page.click("#tab-chat")
    turn = ask(page, "What guards the fennimore harbour?")
    assert "copper lighthouse" in turn.locator(".answer").first.inner_text()
    assert "fennimore.md › Harbour" in turn.locator("button.source").first.inner_text()
    shot(page, "upload-answer-1280")

    big = ("The gigantic file repeats itself. " * 36_000).encode()  # over the daemon's 1 MiB body limit
    page.set_input_files(
        ".kb-bar input[type=file]",
        files=[
            {"name": "blob.bin", "mimeType": "application/octet-stream", "buffer": b"\x00\x01\x02binary"},
            {"name": "huge.txt", "mimeType": "text/plain", "buffer": big},
            {"name": "empty.txt", "mimeType": "text/plain", "buffer": b"  \n"},
        ],
    )
    tray.locator("h2", has_text="0 of 3 documents added").wait_for(timeout=30_000)
    assert "not a text document" in tray.locator(".upload-row[data-file='blob.bin']").inner_text()
    assert "body limit (1.0 MiB)" in tray.locator(".upload-row[data-file='huge.txt']").inner_text()
    assert "the file is empty" in tray.locator(".upload-row[data-file='empty.txt']").inner_text()
    shot(page, "upload-refused-1280")
    assert all("413" in e or "Failed to load resource" in e for e in log.errors), log.errors
    ctx.close()


HOSTILE = (
    "# Ferrocene notes\n\n"
    "The ferrocene probe is calibrated with <script>window.__pwned = 1</script> and "
    '<img src=x onerror="window.__pwned = 2"> every morning.\n\n'
    "The ferrocene manual is at [the manual](javascript:window.__pwned=3) on the shelf.\n"
)


def test_a_hostile_document_renders_as_text(browser, daemon):
    with daemon.client() as http:
        ingest_example(http, "hostile<b>kb</b>", HOSTILE, name='ferro"<img src=x onerror=alert(1)>.md')
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb=hostile<b>kb</b>")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    turn = ask(page, "How is the ferrocene probe calibrated?")
    answer = turn.locator(".answer").first
    assert (
        '<script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2">'
        in answer.inner_text()
    )
    link = ask(page, "Where is the ferrocene manual?").locator(".answer").first
    assert (
        "[the manual](javascript:window.__pwned=3)" in link.inner_text()
    )  # refused as a link: shown as text
    turn4 = ask(page, 'Is it <img src=x onerror="window.__pwned=4"> <script>window.__pwned=5</script>?')
    assert '<img src=x onerror="window.__pwned=4"> <script>' in turn4.locator(".msg.user").inner_text()
    assert page.locator('a[href^="javascript:"]').count() == 0
    turn.locator("button.source").first.click()
    page.locator("#unit-dialog .unit-text").wait_for()
    assert "<script>" in page.locator("#unit-dialog .unit-text").inner_text()
    assert 'ferro"<img src=x onerror=alert(1)>.md' in page.locator("#unit-title").inner_text()
    shot(page, "hostile-unit-1280")
    page.keyboard.press("Escape")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img, main [onerror], #unit-dialog img, #kb-bar b").count() == 0
    assert "hostile<b>kb</b>" in page.locator("#kb-select option:checked").inner_text()
    shot(page, "hostile-chat-1280")
    turn.locator(".graph-button").click()
    request = turn.get_attribute("data-request")
    page.wait_for_url(re.compile(f"&turn={request}$"))
    page.locator(f".graph-svg[data-request='{request}'] .gnode").first.wait_for()
    page.locator(".gnode.kind-plugin.st-success", has_text="gs-symbolic · solve").first.click()
    assert (
        "## Answer\nThe ferrocene probe is calibrated with <script>"
        in page.locator("#inspector pre.cnl").inner_text()
    )
    assert page.evaluate("window.__pwned") is None and dialogs == []
    assert page.locator("#view-graph script, #view-graph img").count() == 0
    shot(page, "hostile-graph-1280")
    assert not log.errors, log.errors
    ctx.close()


def test_the_example_source_names_and_counts_show_in_the_knowledge_view(browser, daemon, tessel):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={tessel}")
    page.click("#tab-knowledge")
    row = page.locator(f"tr[data-kb='{tessel}']")
    row.wait_for()
    assert "mounted" in row.inner_text()
    page.locator("#kb-sources td", has_text=EXAMPLE.name).wait_for()
    shot(page, "knowledge-1280")
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for button in page.locator("#view-knowledge .row-actions button").all():  # nothing cut off
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], button.inner_text()
    shot(page, "knowledge-390")
    page.set_viewport_size(WIDE)
    assert not log.errors, log.errors
    ctx.close()
