"""An ingest that no kb-plugin could index fails, and leaves no source behind that no question could find
(the disk-full case of issue 21: a KB listing thousands of units no index holds)."""

from __future__ import annotations

import pytest
from mrpvm.kernel.errors import IngestError
from mrpvm.knowledge.ingest import ingest_source
from test_ingest import prose, run_kernel


def test_when_every_kb_plugin_fails_the_source_is_not_kept(tmp_path) -> None:
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        with pytest.raises(IngestError) as caught:
            await ingest_source(ctx, kb, "alpha.md", prose(4, "alpha"), sd_plugin="test-sd")
        return caught.value, ctx.store.list_sources(kb.id)

    error, sources = run_kernel(tmp_path, work, enabled="test-sd,test-kb-fail")
    assert "no kb-plugin indexed 'alpha.md'" in error.message and "test-kb-fail" in error.message
    assert sources == []


def test_one_kb_plugin_indexing_is_enough(tmp_path) -> None:
    """The check can pass: with one kb-plugin that indexes beside the failing one, the source stays."""

    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "alpha.md", prose(4, "alpha"), sd_plugin="test-sd")
        return result, ctx.store.list_sources(kb.id)

    result, sources = run_kernel(tmp_path, work, enabled="test-sd,test-kb,test-kb-fail")
    assert result.notified == ["test-kb"] and [s.name for s in sources] == ["alpha.md"]
