"""An ingest encodes the kb-plugins' units file before the store's commit starts (knowledge/in_flight.py):
the encode is the kb calls' last step before they start, and it shared the GIL with the commit's thread.

- The commit's thread starts only once the units file is whole; the kb-plugins still acknowledge the
  source and the store holds it.
- An encode that fails leaves nothing committed: the ingest fails, the store keeps the version it had, no
  removal stays held, and every index answers with the stored version again.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mrpvm.kernel.store_rows import text_hash
from mrpvm.knowledge import notify
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.knowledge.reindex import check_kb

ENABLED = "sd-symbolic,kb-fast,kb-thinkingdb"
KB_PLUGINS = ["kb-fast", "kb-thinkingdb"]
TEXT = "\n\n".join(
    f"## Shelf {i}\n\nThe shelf number {i} holds the spare valves of the pumping station." for i in range(30)
)
TEXT_2 = TEXT.replace("spare valves", "spare gaskets")


def kernel(home: Path, work):
    async def main():
        env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS=ENABLED)
        ctx = await open_context(env)
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()

    return anyio.run(main)


def test_the_commit_starts_once_the_units_file_is_whole(tmp_path, monkeypatch):
    seen: list[str] = []
    files: list[notify.UnitsFile] = []
    real_get = notify.UnitsFile.get

    async def get(self: notify.UnitsFile, analysed: bool) -> bytes:
        files.append(self)
        return await real_get(self, analysed)

    monkeypatch.setattr(notify.UnitsFile, "get", get)

    async def work(ctx):
        real_replace = ctx.store.replace_source

        def replace_source(*args, **kwargs):
            seen.append("encoded" if files and True in files[0]._encoded else "not encoded")
            return real_replace(*args, **kwargs)

        ctx.store.replace_source = replace_source
        kb = ctx.store.create_kb("docs")
        result = await ingest_source(ctx, kb, "pumps.md", TEXT)
        return result, await check_kb(ctx, "docs", repair=False)

    result, state = kernel(tmp_path / "home", work)
    assert seen == ["encoded"]
    assert result.notified == KB_PLUGINS, result.warnings
    assert state.ok and state.sources[0].acknowledged == KB_PLUGINS
    assert state.sources[0].hash == text_hash(TEXT)


def test_a_failed_encode_commits_nothing_and_holds_nothing(tmp_path, monkeypatch):
    home = tmp_path / "home"

    async def first(ctx):
        kb = ctx.store.create_kb("docs")
        return await ingest_source(ctx, kb, "pumps.md", TEXT)

    assert kernel(home, first).notified == KB_PLUGINS
    commits: list[str] = []

    real_get = notify.UnitsFile.get

    async def broken(self: notify.UnitsFile, analysed: bool) -> bytes:
        if self.text == TEXT_2:  # the new version only: the stored one is offered again after the failure
            raise RuntimeError("the encoder ran out of room")
        return await real_get(self, analysed)

    async def second(ctx):
        real_replace = ctx.store.replace_source

        def replace_source(*args, **kwargs):
            commits.append("commit")
            return real_replace(*args, **kwargs)

        ctx.store.replace_source = replace_source
        with monkeypatch.context() as patch:
            patch.setattr(notify.UnitsFile, "get", broken)
            with pytest.raises(RuntimeError, match="ran out of room"):
                await ingest_source(ctx, ctx.store.get_kb("docs"), "pumps.md", TEXT_2)
        kb = ctx.store.get_kb("docs")
        return ctx.store.find_source(kb.id, "pumps.md"), await check_kb(ctx, "docs", repair=False)

    stored, state = kernel(home, second)
    assert commits == []  # the commit never started
    assert stored is not None and stored.hash == text_hash(TEXT)
    assert state.ok and state.pendingRemovals == []
    assert state.sources[0].acknowledged == KB_PLUGINS
