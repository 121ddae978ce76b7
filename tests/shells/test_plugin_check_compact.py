"""`mrpvm plugin check` judges the compact reply (protocol/SPEC.md, Compact reply) by the rules the kernel
applies to it: a valid MessagePack document passes, and a broken one, one for another op or one signed by
another plugin fails with the fix."""

from __future__ import annotations

from types import SimpleNamespace

from mrpvm.protocol.cnl_compact import encode_compact
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, PluginResult
from mrpvm.shells.plugin_tools.check_judge import judge_valid

PLUGIN = "sd-symbolic"
OP = "normalizePersistentContext"


def reply(stdout: bytes) -> SimpleNamespace:
    return SimpleNamespace(timedOut=False, exitCode=0, stdout=stdout, stderr=b"", durationMs=3.0)


def document(plugin: str = PLUGIN, confidence: str | None = "high") -> CnlDocument:
    unit = KnowledgeUnit(
        id="s::chunk-000::unit-000",
        sourceId="s",
        chunkId="s::chunk-000",
        kuType="atomic",
        role="Description",
        topic="pump",
        claim="The pump stops at dusk.",
    )
    result = PluginResult(status="success", plugin=plugin, confidence=confidence, result="1 unit")
    return CnlDocument(result=result, units=[unit])


def test_a_valid_compact_reply_passes():
    passed, detail = judge_valid(reply(encode_compact(document())), OP, PLUGIN)
    assert passed, detail
    assert "Status: success" in detail


def test_a_broken_compact_reply_fails_with_the_fix():
    for stdout in (encode_compact(document())[:-5], encode_compact(document(confidence=None))):
        passed, detail = judge_valid(reply(stdout), OP, PLUGIN)
        assert not passed
        assert detail.startswith("invalid compact reply") and "fix:" in detail


def test_a_compact_reply_to_another_op_or_from_another_plugin_fails():
    passed, detail = judge_valid(reply(encode_compact(document())), "solve", PLUGIN)
    assert not passed and "answers only normalizePersistentContext" in detail
    passed, detail = judge_valid(reply(encode_compact(document(plugin="other"))), OP, PLUGIN)
    assert not passed and "expected the manifest id" in detail
