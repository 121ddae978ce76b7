"""The web app's sessions, deep links, token prompt, pins and LLM settings in a real Chromium against a
real `mrpvm serve` (the chat, graph and upload paths: tests/shells/test_web_browser.py)."""

from __future__ import annotations

import json
import re

import pytest
from api_support import Daemon
from web_support import PHONE, WIDE, ask, ingest_example, open_page, shot

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def docs(daemon):
    with daemon.client() as http:
        ingest_example(http, "docs")
    return "docs"


def test_sessions_are_titled_renamed_reopened_and_deleted(browser, daemon, docs, http):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={docs}")
    session = re.search(r"session=(ses_[0-9a-f]+)", page.url).group(1)
    ask(page, "How do I clean a broken cache?")
    item = page.locator(f".session-item[data-session='{session}']")
    item.locator(".session-title", has_text="How do I clean a broken cache?").wait_for()
    assert http.get(f"/sessions/{session}").json()["title"] == "How do I clean a broken cache?"
    item.get_by_role("button", name=re.compile("^Rename")).click()
    page.fill("#ask-dialog input[name=value]", "Cache <i>questions</i>")
    shot(page, "sessions-rename-1280")
    page.press("#ask-dialog input[name=value]", "Enter")
    item.locator(".session-title", has_text="Cache <i>questions</i>").wait_for()
    assert http.get(f"/sessions/{session}").json()["title"] == "Cache <i>questions</i>"
    assert page.locator("#sidebar i").count() == 0

    page.click(
        "#new-session"
    )  # a new session starts empty, with the same KB, and is made on the first question
    assert page.locator(".empty-chat").is_visible() and "?" not in page.url
    assert page.locator("#kb-select").input_value() == docs
    ask(page, "What happens when the needs of two targets form a cycle?")
    other = re.search(r"session=(ses_[0-9a-f]+)", page.url).group(1)
    assert other != session and http.get(f"/sessions/{other}").json()["kb_name"] == docs
    shot(page, "sessions-1280")
    ctx.close()

    ctx, page, log2 = open_page(browser, f"{daemon.url}/?session={session}")  # reopen by deep link
    assert page.locator("article.turn").count() == 1
    assert "How do I clean a broken cache?" in page.locator("article.turn .msg.user").inner_text()
    assert page.locator(f".session-item.open[data-session='{session}']").count() == 1
    page.locator(f".session-item[data-session='{other}'] .session-open").click()
    page.wait_for_url(re.compile(f"session={other}$"))
    assert "cycle" in page.locator("article.turn .msg.user").inner_text()
    page.locator(f".session-item[data-session='{session}']").get_by_role(
        "button", name=re.compile("^Delete")
    ).click()
    assert "Delete “Cache <i>questions</i>”" in page.locator("#ask-dialog").inner_text()
    page.locator("#ask-dialog button.danger").click()
    page.locator(f".session-item[data-session='{session}']").wait_for(state="detached")
    assert http.get(f"/sessions/{session}").status_code == 404
    assert page.locator("article.turn").count() == 1  # the open session was another one
    assert not log.errors and not log2.errors, log.errors + log2.errors
    ctx.close()


def test_bad_deep_links_say_what_is_wrong(browser, daemon):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb=no-such-kb")
    notice = page.locator("#notice")
    assert notice.is_visible() and "There is no knowledge base named “no-such-kb”." in notice.inner_text()
    assert "?" not in page.url
    shot(page, "deep-link-bad-kb-1280")
    page.goto(f"{daemon.url}/?session=ses_0000000000000000")
    page.wait_for_selector("body.ready")
    assert "Could not open session ses_0000000000000000" in page.locator("#notice").inner_text()
    assert all("404" in e or "Not Found" in e for e in log.errors)  # the lookups that failed, nothing else
    ctx.close()


def test_the_token_is_asked_once_and_kept_for_the_tab(browser, tmp_path):
    with Daemon(tmp_path / "home", token="s3cret-token") as daemon:
        ctx = browser.new_context(viewport=WIDE)
        page = ctx.new_page()
        page.goto(daemon.url + "/")
        prompt = page.locator("#ask-dialog[open] input[type=password]")
        prompt.wait_for()  # the page loaded without the token; the API asked for it
        shot(page, "token-prompt-1280")
        prompt.fill("wrong")
        prompt.press("Enter")
        page.locator("#ask-dialog[open] input[type=password]").wait_for()  # asked again
        page.fill("#ask-dialog[open] input[type=password]", "s3cret-token")
        page.press("#ask-dialog[open] input[type=password]", "Enter")
        page.wait_for_selector("body.ready")
        assert page.locator("#daemon-status").inner_text() == "ready"
        assert page.evaluate("sessionStorage.getItem('mrpvm.token')") == "s3cret-token"
        page.reload()
        page.wait_for_selector("body.ready")
        assert page.locator("#ask-dialog[open]").count() == 0  # kept for the tab
        page.click("#tab-settings")
        page.get_by_role("button", name="Forget the token").click()
        assert page.evaluate("sessionStorage.getItem('mrpvm.token')") is None
        other = ctx.new_page()  # another tab has its own sessionStorage: asked again
        other.goto(daemon.url + "/")
        other.locator("#ask-dialog[open] input[type=password]").wait_for()
        ctx.close()


def test_pins_go_with_each_turn_and_llm_settings_are_edited(browser, daemon, docs, http):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={docs}")
    page.click("#tab-plugins")
    card = page.locator(".plugin-card[data-plugin='kb-fast']")
    card.locator("summary", has_text="Planner hints").click()
    assert "expectedLatencyMs" in card.inner_text() and "preferredDepth" in card.inner_text()
    page.select_option("#pin-kb_plugin", "kb-fast")
    page.select_option("#pin-goal_solver_plugin", "gs-symbolic")
    shot(page, "plugins-1280")
    page.click("#tab-chat")
    chips = page.locator("#pin-chips").inner_text()
    assert "Knowledge (kb): kb-fast" in chips and "Goal solver: gs-symbolic" in chips
    sent: list[dict] = []
    page.on(
        "request",
        lambda r: sent.append(json.loads(r.post_data)) if r.url.endswith("/chat/completions") else None,
    )
    ask(page, "How do I clean a broken cache?")
    assert sent[-1]["kb_plugin"] == "kb-fast" and sent[-1]["goal_solver_plugin"] == "gs-symbolic"
    assert sent[-1]["stream"] is True  # the answer came over the SSE route
    page.get_by_role("button", name="Unpin Goal solver").click()
    ask(page, "What happens when the needs of two targets form a cycle?")
    assert sent[-1]["kb_plugin"] == "kb-fast" and "goal_solver_plugin" not in sent[-1]

    page.click("#tab-settings")
    page.locator("#llm-roles input[name='role:goal-fast']").fill("tiny-model")
    page.locator("#llm-roles input[name=defaultModel]").fill("base-model")
    page.get_by_role("button", name="Save LLM settings").click()
    page.locator(".toast", has_text="LLM settings saved").wait_for()
    roles = http.get("/settings/llm-roles").json()
    assert roles["roles"]["goal-fast"] == "tiny-model" and roles["defaultModel"] == "base-model"
    shot(page, "settings-1280")
    page.locator("#llm-roles input[name='role:goal-fast']").fill("")
    page.get_by_role("button", name="Save LLM settings").click()
    page.locator(".toast", has_text="LLM settings saved").nth(1).wait_for()
    assert http.get("/settings/llm-roles").json()["roles"]["goal-fast"] == ""
    page.set_viewport_size(PHONE)
    page.click("#tab-plugins")
    page.wait_for_timeout(150)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, "plugins-390")
    assert not log.errors, log.errors
    ctx.close()


def test_the_kb_bar_creates_mounts_forks_and_saves(browser, daemon, docs, http):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={docs}")
    session = re.search(r"session=(ses_[0-9a-f]+)", page.url).group(1)
    bar = page.locator("#kb-bar")
    units = http.get(f"/kbs/{docs}/sources").json()["kb"]["units"]
    assert f"{units} units" in bar.inner_text()

    bar.get_by_role("button", name="Save session").click()  # nothing committed yet: said plainly
    page.fill("#ask-dialog input[name=value]", "notes")
    page.press("#ask-dialog input[name=value]", "Enter")
    page.locator(".toast-error", has_text="NOTHING_TO_SAVE").wait_for()

    ask(page, "The zorblax is a teal bird that lives in Norway. What colour is the zorblax?")  # keeps a unit
    bar.get_by_role("button", name="Save session").click()
    assert page.locator("#ask-dialog input[name=value]").input_value() == docs  # defaults to the mounted KB
    page.fill("#ask-dialog input[name=value]", "notes")
    page.press("#ask-dialog input[name=value]", "Enter")
    page.locator(".toast", has_text="into notes as session-").wait_for()
    notes = http.get("/kbs/notes/sources").json()
    assert notes["kb"]["units"] >= 1 and notes["sources"][0]["name"] == f"session-{session}"

    bar.get_by_role("button", name="Fork").click()
    assert page.locator("#ask-dialog input[name=value]").input_value() == f"{docs}-copy"
    page.press("#ask-dialog input[name=value]", "Enter")
    page.locator(".toast", has_text=f"Forked {docs} as {docs}-copy").wait_for()
    page.wait_for_function(f"() => document.querySelector('#kb-select').value === '{docs}-copy'")
    assert http.get(f"/sessions/{session}").json()["kb_name"] == f"{docs}-copy"
    assert http.get(f"/kbs/{docs}-copy/sources").json()["kb"]["units"] == units

    bar.get_by_role("button", name="New KB").click()
    page.fill("#ask-dialog input[name=value]", "fresh")
    page.press("#ask-dialog input[name=value]", "Enter")
    page.wait_for_function("() => document.querySelector('#kb-select').value === 'fresh'")
    assert http.get(f"/sessions/{session}").json()["kb_name"] == "fresh"
    shot(page, "kb-bar-1280")

    page.select_option("#kb-select", docs)  # mount by choosing
    page.locator(".toast", has_text=f"Mounted {docs}").wait_for()
    assert http.get(f"/sessions/{session}").json()["kb_name"] == docs
    bar.get_by_role("button", name="New KB").click()
    page.fill("#ask-dialog input[name=value]", "fresh")  # a name in use: the daemon's error, shown
    page.press("#ask-dialog input[name=value]", "Enter")
    page.locator(".toast-error", has_text="KB_EXISTS").wait_for()
    assert all("409" in e or "422" in e or "Failed to load resource" in e for e in log.errors), log.errors
    ctx.close()


def test_a_turn_the_daemon_refuses_shows_its_error(browser, daemon, docs):
    ctx, page, log = open_page(browser, f"{daemon.url}/?kb={docs}")
    page.evaluate("sessionStorage.setItem('mrpvm.pins', JSON.stringify({kb_plugin: 'kb-nope'}))")
    page.reload()
    page.wait_for_selector("body.ready")
    page.fill("#message", "How do I clean a broken cache?")
    page.press("#message", "Enter")
    error = page.locator("article.turn .turn-error")
    error.wait_for()
    assert "UNKNOWN_PLUGIN" in error.inner_text() and "kb-nope" in error.inner_text()
    assert page.locator("#send").is_enabled()
    shot(page, "turn-error-1280")
    ctx.close()
