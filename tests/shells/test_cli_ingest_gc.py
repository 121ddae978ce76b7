"""`mrpvm ingest` ingests each source with the cyclic collector paused (shells/cli/ingest.py): a source's
tree is acyclic, and the young collections its objects trigger would walk them again on the critical path.
The collector is on again after each source, whether it was ingested or failed."""

from __future__ import annotations

import gc
from pathlib import Path

import anyio
import pytest
from mrpvm.kernel.errors import IngestError
from mrpvm.knowledge import ingest as ingest_module
from mrpvm.shells.cli.common import stdout_console
from mrpvm.shells.cli.ingest import _ingest_file
from mrpvm.shells.cli.progress import JobProgress


@pytest.mark.parametrize("fails", [False, True])
def test_each_source_is_ingested_with_the_collector_paused(monkeypatch, fails):
    seen: list[bool] = []

    class Stored:
        unchanged, unitCount, bytes, chunks, warnings, notified = False, 3, 5, 1, [], []
        id, name = "src", "a.md"

    async def ingest_source(ctx, kb, name, text, **kwargs):
        seen.append(gc.isenabled())
        if fails:
            raise IngestError("no units")
        return Stored()

    monkeypatch.setattr(ingest_module, "ingest_source", ingest_source)
    job = JobProgress(1, 5, out=stdout_console(), enabled=False)

    class Kb:
        name = "docs"

    assert gc.isenabled()
    record = anyio.run(
        lambda: _ingest_file(None, Kb(), "a.md", Path("a.md"), "hello", 5, "sd", False, job, True)  # type: ignore[arg-type]
    )
    assert seen == [False] and gc.isenabled()
    assert ("error" in record) is fails
