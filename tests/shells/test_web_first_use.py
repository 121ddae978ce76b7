"""The web app's rough edges a new user met, each measured in a real Chromium at 1280×800 and 390×844:
the finished upload panel never covers Send; graph text is readable on a phone, starts at the top and a
selected node stays in sight above the details sheet; seed and knowledge-view labels are whole; the
composer's placeholder fits; the KB controls stay compact; nothing scrolls sideways; counts are
singular for one; one-question sessions fold in the sidebar. Screenshots: tests/artifacts/web/first-use-*.
"""

from __future__ import annotations

import pytest
from web_support import PHONE, WIDE, ask, ingest_example, open_page, shot

pytestmark = pytest.mark.slow

VIEWPORTS = pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1280", "390"])
QUESTION = "How do I clean a broken cache?"

NO_SIDEWAYS_SCROLL = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
SMALLEST_GRAPH_TEXT = """() => {
  const sizes = [...document.querySelectorAll('.graph-svg text')].map((t) => {
    const box = t.getBoundingClientRect();
    if (!box.width) return null;
    return parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
  }).filter((v) => v !== null);
  return sizes.length ? Math.min(...sizes) : 0;
}"""
PLACEHOLDER_FITS = """() => {
  const input = document.getElementById('message');
  const style = getComputedStyle(input);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return ctx.measureText(input.placeholder).width <= room;
}"""


@pytest.fixture(scope="module")
def tessel(daemon):
    with daemon.client() as http:
        ingest_example(http, "tessel")
    return "tessel"


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@VIEWPORTS
def test_the_finished_upload_panel_never_covers_send(browser, daemon, tessel, viewport):
    width = viewport["width"]
    with daemon.client() as http:
        ingest_example(http, f"one-{width}")
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb=one-{width}", viewport)
    assert page.evaluate(PLACEHOLDER_FITS), "the composer's placeholder is cut"
    assert page.locator(".kb-stats").inner_text().startswith("1 source · ")  # not "1 sources"
    bar = page.locator("#kb-bar").bounding_box()
    assert bar is not None and bar["height"] <= 0.12 * viewport["height"], bar
    ask(page, QUESTION)
    page.set_input_files(
        ".kb-bar input[type=file]",
        files=[
            {
                "name": "zorblax.md",
                "mimeType": "text/markdown",
                "buffer": b"# Z\n\nThe zorblax lives in Norway.\n",
            }
        ],
    )
    tray = page.locator("#upload-tray")
    tray.locator("h2", has_text="1 of 1 document added").wait_for(timeout=60_000)
    assert (
        "1 unit" in tray.locator(".upload-note").inner_text()
        or "units" in tray.locator(".upload-note").inner_text()
    )
    send = page.locator("#send").bounding_box()
    panel = tray.bounding_box()
    assert send and panel and not overlap(send, panel), (send, panel)
    page.locator("#send").click(trial=True, timeout=5_000)  # nothing intercepts a click on Send
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    shot(page, f"first-use-upload-{width}")
    page.set_viewport_size({"width": viewport["width"], "height": viewport["height"] - 200})  # a resize
    send, panel = page.locator("#send").bounding_box(), tray.bounding_box()
    assert send and panel and not overlap(send, panel), (send, panel)
    ctx.close()


def test_the_graph_on_a_phone_is_readable_and_keeps_the_selection_in_sight(browser, daemon, tessel):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={tessel}", PHONE)
    turn = ask(page, QUESTION)
    turn.locator(".graph-button").click()
    page.wait_for_selector(".graph-svg .gnode")
    assert page.evaluate(SMALLEST_GRAPH_TEXT) >= 11, "graph text under 11px"
    canvas = page.locator(".canvas-wrap").bounding_box()
    frame = page.locator(".gcontainer.kind-frame .cbox").first.bounding_box()
    assert canvas and frame and frame["y"] - canvas["y"] <= 40, (canvas, frame)  # no empty band above
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    seed_title = page.locator(".gcontainer.kind-seed .ctitle").first.text_content() or ""
    assert QUESTION in seed_title and not seed_title.endswith("…"), seed_title
    for view in page.locator(".gnode.kind-event .title").all_text_contents():
        assert not view.endswith("…"), view
    shot(page, "first-use-graph-390")

    last = page.locator(".gnode.kind-plugin").last  # off screen at first: the user picks it from the keyboard
    last.focus()
    page.keyboard.press("Enter")
    page.locator("#inspector .inspector-head").wait_for()
    node = page.locator(".gnode.selected").first.bounding_box()
    sheet = page.locator("#inspector").bounding_box()
    canvas = page.locator(".canvas-wrap").bounding_box()
    assert node and sheet and canvas
    assert node["y"] >= canvas["y"] and node["y"] + node["height"] <= sheet["y"] + 1, (node, sheet)
    assert node["x"] >= canvas["x"] - 1 and node["x"] + 20 <= canvas["x"] + canvas["width"], (node, canvas)
    assert page.evaluate(SMALLEST_GRAPH_TEXT) >= 11
    shot(page, "first-use-graph-selected-390")
    ctx.close()


def test_labels_are_whole_on_a_wide_screen(browser, daemon, tessel):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={tessel}", WIDE)
    turn = ask(page, QUESTION)
    turn.locator(".graph-button").click()
    page.wait_for_selector(".graph-svg .gnode")
    seed_title = page.locator(".gcontainer.kind-seed .ctitle").first.text_content() or ""
    assert QUESTION in seed_title and not seed_title.endswith("…"), seed_title
    for title in page.locator(".gnode .title").all_text_contents():
        assert not title.endswith("…"), title
    shot(page, "first-use-graph-1280")
    ctx.close()


@VIEWPORTS
def test_no_view_scrolls_sideways(browser, daemon, tessel, viewport):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={tessel}", viewport)
    for tab in ("chat", "knowledge", "plugins", "settings"):
        page.click(f"#tab-{tab}")
        page.wait_for_selector(f"#view-{tab}:not([hidden])")
        page.wait_for_timeout(300)
        assert page.evaluate(NO_SIDEWAYS_SCROLL), tab
        if tab == "plugins":  # an LLM plugin with no endpoint says so, not just "enabled"
            card = page.locator(".plugin-card[data-plugin='gs-llm-fast']")
            assert "no LLM endpoint" in card.inner_text()
    endpoint = page.locator("#llm-endpoint")
    endpoint.wait_for()
    assert "none configured" in endpoint.inner_text() and "MRPVM_LLM_BASE_URL" in endpoint.inner_text()
    shot(page, f"first-use-settings-{viewport['width']}")
    ctx.close()


def test_one_question_sessions_fold_in_the_sidebar(browser, daemon):
    with daemon.client() as http:
        made = [http.post("/sessions", json={}).json()["session_id"] for _ in range(8)]
    ctx, page, log = open_page(browser, f"{daemon.url}/", WIDE)
    listed = page.locator("#session-list .session-item")
    more = page.locator("#session-list .session-more button")
    assert listed.count() <= 5 + 1 and more.count() == 1  # the latest few, the rest folded
    assert "older one-question session" in more.inner_text()
    more.click()
    for session in made:
        page.locator(f"#session-list [data-session='{session}']").wait_for()
    ctx.close()
