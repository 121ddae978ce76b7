"""The execution graph of a large turn in a real Chromium: a synthetic trace of about 270 nodes
(nested child frames, backtracking, rejections, LLM calls), committed into a real daemon's store and
opened by its deep link, stays usable: child frames start collapsed, a frame expands, pan and zoom work,
LLM calls fold into badges. The trace → drawing model (app/graph_model.js) is checked in the same page.
"""

from __future__ import annotations

import pytest
from mrpvm.kernel.records import TurnRecord
from mrpvm.kernel.store import Store
from web_support import PHONE, big_trace, open_page, shot

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def large_turn(daemon):
    with daemon.client() as http:
        session = http.post("/sessions", json={}).json()["session_id"]
    request = "req_large0000000001"
    trace = big_trace(request, session)
    store = Store.open(daemon.home)
    try:
        store.commit_turn(
            TurnRecord(
                requestId=request,
                sessionId=session,
                userMessage="A question with ten parts, half of them decomposed",
                responseMarkdown="(synthetic)",
                responseDocument={
                    "requestId": request,
                    "sessionId": session,
                    "status": "success",
                    "groups": [],
                },
                trace=trace,
                durationMs=1234.0,
            ),
            [],
        )
    finally:
        store.close()
    return session, request, trace


def boxes(page) -> int:
    return page.locator(".graph-svg .gnode, .graph-svg .gcontainer").count()


def test_a_large_trace_opens_collapsed_and_stays_usable(browser, daemon, large_turn):
    session, request, trace = large_turn
    assert len(trace["nodes"]) > 250
    ctx, page, log = open_page(browser, f"{daemon.url}/?session={session}&turn={request}")
    page.locator(".graph-svg .gnode").first.wait_for(timeout=30_000)
    collapsed = page.locator(".gnode.collapsed")
    assert collapsed.count() == 5  # the child frames of seeds 1, 3, 5, 7, 9
    shown = boxes(page)
    assert 40 < shown < len(trace["nodes"]) / 2
    assert (
        page.locator(".gnode.st-rejected").count() == 10
        and page.locator(".gnode.st-insufficient").count() == 20
    )
    assert page.locator(".gedge.edge-backtrack").count() >= 30
    assert page.locator(".gedge.edge-validates").count() == 10
    assert page.locator(".gedge.edge-decomposes").count() == 5
    assert page.locator(".gnode .badge-text", has_text="LLM 2").count() == 10
    shot(page, "large-graph-1280")

    collapsed.first.locator("[data-toggle]").click()  # expand one child frame
    page.wait_for_function("() => document.querySelectorAll('.gnode.collapsed').length === 4")
    assert boxes(page) > shown
    svg = page.locator(".graph-svg")
    zoom = float(svg.get_attribute("data-zoom"))
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    page.wait_for_function(f"() => Number(document.querySelector('.graph-svg').dataset.zoom) > {zoom}")
    before = page.locator(".graph-svg .viewport").get_attribute("transform")
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 320, box["y"] + 260, steps=6)
    page.mouse.up()
    assert page.locator(".graph-svg .viewport").get_attribute("transform") != before
    page.get_by_role("button", name="Fit to view").click()
    page.get_by_role("button", name="Collapse every seed").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('.graph-svg .gnode, .graph-svg .gcontainer').length < {shown}"
    )

    llm = page.locator(".gnode.collapsed").first
    llm.locator("[data-toggle]").click()  # expand seed 1 again, then inspect its LLM solve
    node = page.locator(".gnode.kind-plugin", has_text="gs-llm-fast · solve").first
    node.click()
    inspector = page.locator("#inspector")
    inspector.locator("h3", has_text="LLM calls (2)").wait_for()
    assert "## Plugin Result" in inspector.locator("pre.cnl").inner_text()
    shot(page, "large-graph-inspector-1280")
    page.set_viewport_size(PHONE)
    page.get_by_role("button", name="Fit to view").click()
    shot(page, "large-graph-390")
    assert not log.errors, log.errors
    ctx.close()


def test_the_drawing_model_nests_frames_folds_llm_calls_and_merges_collapsed_edges(
    browser, daemon, large_turn
):
    session, request, trace = large_turn
    ctx, page, log = open_page(browser, f"{daemon.url}/?session={session}")
    result = page.evaluate(
        """async (trace) => {
          const m = await import('/app/graph_model.js');
          const model = m.buildModel(trace);
          const kinds = (ids) => ids.map((id) => model.nodes.get(id).kind);
          const root = model.nodes.get(model.roots[0]);
          const seed = [...model.nodes.values()].find((n) => n.kind === 'seed' && n.depth === 2 && n.label.endsWith('part 2'));
          const child = [...model.nodes.values()].find((n) => n.kind === 'frame' && n.depth > 0);
          const llmSolve = [...model.nodes.values()].find((n) => n.pluginId === 'gs-llm-fast');
          const all = m.visibleGraph(model, new Set());
          const folded = m.visibleGraph(model, new Set([child.id]));
          const auto = m.autoCollapse(model, 120);
          return {
            roots: kinds(model.roots),
            rootKids: kinds(root.children),
            seedKids: kinds(seed.children).sort(),
            childParentKind: model.nodes.get(child.container).kind,
            llmFolded: llmSolve.llm.length,
            drawnLlm: [...all.visible].filter((id) => model.nodes.get(id).kind === 'llm').length,
            flow: model.edges.filter((e) => e.kind === 'flow').length,
            parentEdgesDrawn: model.edges.filter((e) => e.kind === 'parent').length,
            visibleAll: all.visible.size,
            visibleFolded: folded.visible.size,
            intoFolded: folded.edges.filter((e) => e.dst === child.id).map((e) => e.kind),
            autoKinds: [...auto].map((id) => model.nodes.get(id).kind),
            summary: m.summarize(model),
          };
        }""",
        trace,
    )
    assert result["roots"] == ["frame"] and result["rootKids"] == ["branch"]
    assert result["seedKids"] == ["event", "plugin", "plugin", "plugin", "plugin", "plugin", "plugin"]
    assert result["childParentKind"] == "seed"  # a child frame nests in the seed that decomposed
    assert result["llmFolded"] == 2 and result["drawnLlm"] == 0
    assert result["parentEdgesDrawn"] == 0 and result["flow"] > 0
    assert result["visibleFolded"] < result["visibleAll"]
    assert result["intoFolded"] == ["decomposes"]  # edges into what a collapsed frame hides end at it
    assert set(result["autoKinds"]) == {"frame"}
    summary = result["summary"]
    assert summary["frames"] == 6 and summary["maxDepth"] == 1
    assert summary["byStatus"]["rejected"] == 25 and summary["llmCalls"] == 50
    assert not log.errors, log.errors
    ctx.close()
