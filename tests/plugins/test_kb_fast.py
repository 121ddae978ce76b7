"""kb-fast through real processes: one-shot JSON on stdin, worker mode with frames, artifacts on disk."""

from __future__ import annotations

import json

import msgspec
from kb_corpus import (
    BAKING,
    NETWORK,
    Worker,
    intent,
    one_shot,
    retrieve_request,
    run_plugin,
    selected,
    source_request,
    tree,
)
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.envelope import OnSessionEventPayload, Request, encode_request

MODULE = "kb_fast"
NET = tree(
    "network", NETWORK, "Home network guide: router setup, mesh networks, guest network and wireless bands."
)
BAKE = tree(
    "baking", BAKING, "Sourdough baking guide: reviving and feeding a starter, steam, crust and crumb."
)

RESET = intent(1, "implement", "How do I reset the router?")
STARTER = intent(1, "define", "What is a sourdough starter?")


def test_bare_ds016_request_one_shot():
    body = {
        "prompt": "How do I bleed a radiator?",
        "context": [
            {
                "title": "r1",
                "sourceLink": "house.md",
                "text": "Role: Procedure\nTopic: bleeding a radiator\nProcedure: Turn the bleed valve a quarter turn until water appears, then close it.",
            },
            {
                "title": "r2",
                "sourceLink": "house.md",
                "text": "Role: Narrative\nTopic: the attic\nClaim: The attic was converted into a study in 2015.",
            },
        ],
    }
    proc = run_plugin(MODULE, json.dumps(body).encode())
    assert proc.returncode == 0, proc.stderr.decode()
    doc = parse_document(proc.stdout.decode(), "retrieve")
    assert doc.result.status == "success" and doc.result.plugin == "kb-fast"
    assert selected(doc) == ["r1"]
    assert doc.units[0].resolvedFor == ["intent-1"] and doc.units[0].score is not None


def test_invalid_request_is_a_structured_error(tmp_path):
    bad = source_request("", NET, tmp_path / "kb")
    proc = run_plugin(MODULE, encode_request(bad))
    assert proc.returncode == 2
    err = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    assert err["code"] == "SCHEMA_VIOLATION" and "sourceId" in err["message"]
    proc = run_plugin(MODULE, b'{"prompt": "x"}')
    assert proc.returncode == 2


def test_upsert_replace_and_remove_are_seen_by_new_processes(tmp_path):
    art = tmp_path / "artifacts" / "kb-test" / "kb-fast"
    doc = one_shot(MODULE, source_request("network", NET, art), "onSourceText")
    assert doc.result.status == "success" and f"indexed {len(NET)} units" in doc.result.result
    assert (art / "units.sqlite").is_file() and (art / "index" / "meta.json").is_file()
    assert (art / "generation").read_text() == "1"
    one_shot(MODULE, source_request("baking", BAKE, art), "onSourceText")

    # a NEW process reads the KB from disk: the retrieve carries no inline units
    found = one_shot(MODULE, retrieve_request([RESET], artifacts=art))
    assert selected(found)[0] == "network::chunk-000::unit-000" and found.resolved[0].sufficient

    # upsert replaces every unit of the source: the old reset procedure disappears, a new unit appears
    new_net = tree(
        "network",
        [
            (
                "Cabling",
                [
                    (
                        "Procedure",
                        "crimping a cable",
                        "1. Strip the jacket.\n2. Order the wires.\n3. Crimp the plug.",
                    )
                ],
            )
        ],
    )
    doc = one_shot(MODULE, source_request("network", new_net, art), "onSourceText")
    assert f"replaced {len(NET)}" in doc.result.result
    gone = one_shot(MODULE, retrieve_request([RESET], artifacts=art))
    assert not [u for u in gone.units if "reset" in u.body.lower()]  # same unit id now holds other text
    assert gone.resolved[0].sufficient is False
    crimp = one_shot(
        MODULE, retrieve_request([intent(1, "implement", "How do I crimp a network cable?")], artifacts=art)
    )
    assert selected(crimp)[0] == "network::chunk-000::unit-000"
    assert "Crimp" in crimp.units[0].body
    # the other source is untouched
    assert (
        selected(one_shot(MODULE, retrieve_request([STARTER], artifacts=art)))[0]
        == "baking::chunk-000::unit-001"
    )

    # remove deletes the source's units
    doc = one_shot(MODULE, source_request("network", [], art, action="remove"), "onSourceText")
    assert doc.result.result.startswith(f"removed {len(new_net)}")
    after = one_shot(
        MODULE, retrieve_request([intent(1, "implement", "How do I crimp a network cable?")], artifacts=art)
    )
    assert not [u for u in after.units if u.sourceId == "network"]
    assert (art / "generation").read_text() == "4"  # one bump per committed write


def test_worker_reloads_when_another_process_changes_the_kb(tmp_path):
    art = tmp_path / "kb-fast"
    one_shot(MODULE, source_request("baking", BAKE, art), "onSourceText")
    worker = Worker(MODULE)
    try:
        first = worker.call(retrieve_request([STARTER], artifacts=art))
        assert selected(first)[0] == "baking::chunk-000::unit-001"
        again = worker.call(retrieve_request([RESET], artifacts=art))
        assert again.resolved[0].sufficient is False  # the network source is not there yet
        # another process (a second worker of the pool, say) ingests a source
        one_shot(MODULE, source_request("network", NET, art), "onSourceText")
        seen = worker.call(retrieve_request([RESET], artifacts=art))
        assert selected(seen)[0] == "network::chunk-000::unit-000"
        # and the worker itself ingests: a removal it makes is visible to its next retrieve
        worker.call(source_request("network", [], art, action="remove"), "onSourceText")
        assert worker.call(retrieve_request([RESET], artifacts=art)).resolved[0].sufficient is False
    finally:
        assert worker.close() == 0


def test_inline_units_and_kb_are_searched_together(tmp_path):
    art = tmp_path / "kb-fast"
    one_shot(MODULE, source_request("network", NET, art), "onSourceText")
    session = [
        msgspec.structs.replace(u, id=u.id.replace("baking", "session::t1"), sourceId="session") for u in BAKE
    ]
    doc = one_shot(MODULE, retrieve_request([RESET, msgspec.structs.replace(STARTER, index=2)], session, art))
    assert selected(doc, 1)[0] == "network::chunk-000::unit-000"
    assert selected(doc, 2)[0] == "session::t1::chunk-000::unit-001"
    assert all(r.sufficient for r in doc.resolved)


def test_session_event_is_acknowledged():
    request = Request(
        op="onSessionEvent", prompt="session units", context=[], payload=OnSessionEventPayload(units=BAKE)
    )
    doc = one_shot(MODULE, request, "onSessionEvent")
    assert doc.result.status == "success" and str(len(BAKE)) in doc.result.result
    empty = Request(
        op="onSessionEvent", prompt="x", context=[], payload=OnSessionEventPayload(event="session-deleted")
    )
    assert one_shot(MODULE, empty, "onSessionEvent").result.status == "skipped"


def test_source_without_artifact_folder_is_skipped():
    request = source_request("network", NET, "unused")
    request = msgspec.structs.replace(request, paths=msgspec.structs.replace(request.paths, artifacts=None))
    assert one_shot(MODULE, request, "onSourceText").result.status == "skipped"
