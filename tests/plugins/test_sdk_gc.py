"""The SDK runs a whole-source op (normalizePersistentContext, onSourceText) with the cyclic GC paused, and
every other op with it on; a large reply renders the same CNL either way (protocol/gc_pause.py)."""

from __future__ import annotations

import gc

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.plugins.sdk.runtime import BULK_REPLY_UNITS, render_reply
from mrpvm.protocol.cnl import render_document
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, PluginResult
from mrpvm.protocol.examples import example_request_json


def test_source_ops_run_with_the_collector_paused_and_others_with_it_on():
    seen: dict[str, bool] = {}

    def record(call: Call) -> CnlDocument:
        seen[call.op] = gc.isenabled()
        return call.reply("success", "high", result="ok")

    sd = Plugin("probe-sd", "sd-plugin", {"normalizePersistentContext": record, "detectSeeds": record})
    kb = Plugin("probe-kb", "kb-plugin", {"onSourceText": record, "retrieve": record})
    assert gc.isenabled()
    for plugin, op in (
        (sd, "normalizePersistentContext"),
        (sd, "detectSeeds"),
        (kb, "onSourceText"),
        (kb, "retrieve"),
    ):
        doc, failure, code = plugin.run(example_request_json(op))
        assert failure is None and code == 0 and doc is not None
    assert seen == {
        "normalizePersistentContext": False,
        "detectSeeds": True,
        "onSourceText": False,
        "retrieve": True,
    }
    assert gc.isenabled()


def test_a_large_reply_renders_the_same_cnl_with_the_collector_paused():
    units = [
        KnowledgeUnit(
            id=f"src::chunk-000::unit-{i:04d}",
            sourceId="src",
            chunkId="src::chunk-000",
            kuType="atomic",
            role="Description",
            topic=f"topic {i}",
            claim=f"Claim number {i}.",
        )
        for i in range(BULK_REPLY_UNITS + 1)
    ]
    doc = CnlDocument(result=PluginResult(status="success", plugin="probe"), units=units)
    assert render_reply(doc) == render_document(doc)
    assert gc.isenabled()
