"""`mrpvm plugin check` on the `partial` status (protocol/SPEC.md §6): an onSourceText upsert may answer
it (indexed in part, offered again by the kernel); any other op answering it fails with the fix."""

from __future__ import annotations

from types import SimpleNamespace

from mrpvm.protocol.cnl import render_document
from mrpvm.protocol.document import CnlDocument, PluginResult
from mrpvm.shells.plugin_tools.check_judge import judge_valid

PLUGIN = "kb-balanced"


def reply(status: str) -> SimpleNamespace:
    doc = CnlDocument(
        result=PluginResult(status=status, plugin=PLUGIN, confidence="high", result="dense view: 512 encoded")
    )
    return SimpleNamespace(
        timedOut=False, exitCode=0, stdout=render_document(doc).encode(), stderr=b"", durationMs=3.0
    )


def test_partial_is_a_valid_answer_to_onsourcetext_only():
    passed, detail = judge_valid(reply("partial"), "onSourceText", PLUGIN)
    assert passed and "Status: partial" in detail
    passed, detail = judge_valid(reply("partial"), "onSessionEvent", PLUGIN)
    assert not passed and "only an onSourceText upsert" in detail and "fix:" in detail
    assert judge_valid(reply("success"), "onSessionEvent", PLUGIN)[0]
