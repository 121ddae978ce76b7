"""An ingest call's deadline grows with its text (protocol/SPEC.md §3, Deadline): normalizePersistentContext
and onSourceText get the manifest's timeoutMs per started MiB of the text they handle.

The test plugins' time is set by the text (@@PACE=<ms>@@: that much sleep per MiB, tests/support/
ingest_plugins), not by the machine: a 2.5 MiB source paced at 2,000 ms/MiB needs 5 s in each plugin,
more than a fixed 4,000 ms timeoutMs and well within the scaled 3 × 4,000 ms (7 s to spare for moving and
parsing 2.5 MiB on a busy machine); paced at 6,000 ms/MiB it needs 15 s, more than even the scaled
deadline, and the ingest fails with the plugin's TIMEOUT.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mrpvm.kernel.errors import IngestError
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.protocol.vocab import INGEST_DEADLINE_UNIT_BYTES, ingest_deadline_ms
from test_ingest import PLUGINS, calls, run_kernel

TIMEOUT_MS = 4000
MIB = 1 << 20


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """test-sd and test-kb with a 4 s timeoutMs and room for a 2.5 MiB source in one request."""
    folder = tmp_path / "manifests"
    folder.mkdir()
    for script in ("test_sd.py", "test_kb.py"):
        shutil.copy(PLUGINS / script, folder)
    for name, size in (("test-sd", 4 * MIB), ("test-kb", 32 * MIB)):
        manifest = json.loads((PLUGINS / f"{name}.json").read_text())
        manifest.update(timeoutMs=TIMEOUT_MS, maxInputSizeBytes=size)
        (folder / f"{name}.json").write_text(json.dumps(manifest))
    return folder


def paced_source(ms_per_mib: int, size: int = 5 * MIB // 2) -> str:
    """Paragraphs of words without a sentence end (few units), `size` bytes, paced by the marker."""
    head = f"@@PACE={ms_per_mib}@@ paced source\n\n"
    paragraph = " ".join(f"word{i % 97}" for i in range(16_000)) + "\n\n"
    body = paragraph * (size // len(paragraph) + 1)
    return head + body[: size - len(head)]


def test_the_deadline_is_the_timeout_per_started_mib():
    assert ingest_deadline_ms(TIMEOUT_MS, 0) == TIMEOUT_MS
    assert ingest_deadline_ms(TIMEOUT_MS, INGEST_DEADLINE_UNIT_BYTES) == TIMEOUT_MS
    assert ingest_deadline_ms(TIMEOUT_MS, INGEST_DEADLINE_UNIT_BYTES + 1) == 2 * TIMEOUT_MS
    assert ingest_deadline_ms(TIMEOUT_MS, 5 * MIB // 2) == 3 * TIMEOUT_MS


def test_a_big_source_whose_plugins_outlast_a_fixed_deadline_is_ingested(tmp_path: Path, manifests: Path):
    text = paced_source(2000)
    assert len(text.encode()) == 5 * MIB // 2
    assert TIMEOUT_MS < 2000 * 2.5 < 3 * TIMEOUT_MS  # each plugin outlasts the fixed deadline, not the scaled

    async def work(ctx):
        # a tiny source first: the workers' cold start is not what this test measures
        await ingest_source(ctx, ctx.store.create_kb("warm"), "warm.md", "Warm up.\n", sd_plugin="test-sd")
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "big.md", text, sd_plugin="test-sd")
        return kb.id, result

    kb_id, result = run_kernel(tmp_path / "home", work, enabled="test-sd,test-kb", manifests=manifests)
    assert result.chunks == 1 and result.unitCount > 0
    assert result.notified == ["test-kb"] and not result.warnings
    assert [c["textBytes"] for c in calls(tmp_path / "home", kb_id)] == [len(text.encode())]


def test_a_plugin_slower_than_the_scaled_deadline_still_times_out(tmp_path: Path, manifests: Path):
    text = paced_source(6000)  # 15 s, over 3 × 4 s

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        with pytest.raises(IngestError) as caught:
            await ingest_source(ctx, kb, "big.md", text, sd_plugin="test-sd")
        return caught.value, ctx.store.list_sources(kb.id)

    error, sources = run_kernel(tmp_path / "home", work, enabled="test-sd,test-kb", manifests=manifests)
    assert "TIMEOUT" in str(error) and "test-sd" in str(error)
    assert sources == []
