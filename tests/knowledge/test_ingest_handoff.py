"""Ingest once (issue 22): kb-plugins declaring `handoff: file` get a source's units as one read-only
MessagePack file bound for their call (protocol/handoff.py, kernel/supervisor/handoff.py).

Real plugin processes in the real sandbox: the built-in sd-symbolic and kb-fast, the recording test-kb
(inline units, for comparison) and test-kb-file, a plugin written from SPEC.md alone (no SDK). These tests
need bubblewrap (.ci/run installs it); they fail, not skip, without it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import pytest
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.knowledge.notify import REQUEST_MARGIN
from mrpvm.plugins.kb_common.store import KBStore
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import OnSourceTextPayload, Paths, Request, encode_request
from mrpvm.protocol.handoff import ANALYSER, HandoffError, decode_handoff, encode_handoff

SUPPORT = Path(__file__).resolve().parents[1] / "support"
TESSEL = (PROJECT_ROOT / "examples" / "tessel-build.md").read_text()
ENABLED = "sd-symbolic,kb-fast,test-kb-file,test-kb-inline"


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """The built-in sd-symbolic and kb-fast, the SPEC-only probe (file) and the recording test-kb (inline)."""
    folder = tmp_path / "manifests"
    folder.mkdir()
    for name in ("sd-symbolic", "kb-fast"):
        shutil.copy(PROJECT_ROOT / "manifests" / f"{name}.json", folder)
    shutil.copy(SUPPORT / "handoff_plugins" / "handoff_probe.py", folder)
    shutil.copy(SUPPORT / "handoff_plugins" / "test-kb-file.json", folder)
    shutil.copy(SUPPORT / "ingest_plugins" / "test_kb.py", folder)
    inline = json.loads((SUPPORT / "ingest_plugins" / "test-kb.json").read_text())
    inline.update(id="test-kb-inline", name="test-kb-inline", args=["test_kb.py", "test-kb-inline"])
    inline["maxInputSizeBytes"] = 33554432
    (folder / "test-kb-inline.json").write_text(json.dumps(inline))
    return folder


def ingest(home: Path, manifests: Path, sources: list[tuple[str, str]]):
    """Ingest `sources` (name, text) into KB 'docs'; (kb id, ingest results, sandbox active)."""

    async def main():
        env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS=ENABLED)
        ctx = await open_context(env, manifests_dir=manifests)
        try:
            kb = ctx.store.create_kb("docs")
            results = [await ingest_source(ctx, kb, name, text) for name, text in sources]
            return kb.id, results, ctx.supervisor.sandbox.active
        finally:
            await ctx.aclose()

    return anyio.run(main)


def probe_log(home: Path, kb_id: str) -> list[dict]:
    path = home / "artifacts" / kb_id / "test-kb-file" / "probe.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored_rows(root: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """id -> (hash, content terms) of a kb store's units table."""
    db = sqlite3.connect(root / "units.sqlite")
    try:
        return {i: (h, frozenset(t.split())) for i, h, t in db.execute("SELECT id, hash, terms FROM units")}
    finally:
        db.close()


def test_kb_plugins_index_from_the_handed_file_as_from_inline_units(tmp_path, manifests):
    home = tmp_path / "home"
    kb_id, results, sandboxed = ingest(home, manifests, [("tessel-build.md", TESSEL)])
    assert sandboxed, "bubblewrap is required (.ci/run installs it)"
    result = results[0]
    assert "test-kb-file" in result.notified and "kb-fast" in result.notified, result
    [seen] = probe_log(home, kb_id)
    assert seen["format"] == "mrpvm-units" and seen["version"] == 1
    assert seen["inlineUnits"] == 0  # the units travel in the file only
    assert seen["analyser"] == ANALYSER and seen["analysed"] == len(seen["units"]) > 5
    # kb-fast indexed exactly the units the file carried, with the same hashes and terms as an index
    # built from the same units analysed in the plugin (the inline path)
    root = home / "artifacts" / kb_id / "kb-fast"
    handed = stored_rows(root)
    assert set(handed) == set(seen["units"])
    inline_calls = (home / "artifacts" / kb_id / "test-kb-inline" / "calls.jsonl").read_text().splitlines()
    assert json.loads(inline_calls[0])["units"] == len(seen["units"])
    store = KBStore(root)
    units = [r.unit for r in store.fetch_ids(list(handed)).values()]
    store.db.close()
    fresh = KBStore(tmp_path / "fresh")
    fresh.upsert(result.id, "t", units)
    fresh.db.close()
    assert stored_rows(tmp_path / "fresh") == handed


def test_the_file_is_the_calls_own_and_gone_after_it(tmp_path, manifests):
    home = tmp_path / "home"
    second = TESSEL.replace("Tessel", "Loom").replace("tessel", "loom")
    kb_id, _, sandboxed = ingest(home, manifests, [("a.md", TESSEL), ("b.md", second)])
    assert sandboxed
    first, later = probe_log(home, kb_id)
    assert first["sourceId"] != later["sourceId"]
    for seen in (first, later):
        assert not os.path.exists(seen["unitsFile"])  # removed when the call ended
        assert seen["listed"] is False  # the folder cannot be listed for another call's file
        assert seen["otherPluginFolder"] is False  # another plugin's folder is not in the sandbox
        assert seen["writable"] is False  # read-only
    assert later["earlierReadable"] == []
    folder = home / "handoff" / "test-kb-file"
    os.chmod(folder, 0o700)
    assert os.listdir(folder) == []


def test_a_file_over_the_plugins_limit_goes_without_the_analysis(tmp_path, manifests):
    """The analysis is a convenience: when the file with it exceeds maxInputSizeBytes, the units go
    without it (the plugin analyses them), before the source is left out of the plugin's index."""
    kb_id, _, _ = ingest(tmp_path / "first", manifests, [("tessel-build.md", TESSEL)])
    [full] = probe_log(tmp_path / "first", kb_id)
    lean = len(encode_handoff("s", "n", TESSEL, [], analysed=False))  # text alone: below the units' file
    assert full["analysed"] > 0 and full["bytes"] > lean
    manifest = json.loads((manifests / "test-kb-file.json").read_text())
    manifest["maxInputSizeBytes"] = full["bytes"] + REQUEST_MARGIN - 1  # the analysed file no longer fits
    (manifests / "test-kb-file.json").write_text(json.dumps(manifest))
    kb_id, results, _ = ingest(tmp_path / "second", manifests, [("tessel-build.md", TESSEL)])
    [seen] = probe_log(tmp_path / "second", kb_id)
    assert "test-kb-file" in results[0].notified
    assert seen["analyser"] == "" and seen["analysed"] == 0
    assert len(seen["units"]) == len(full["units"]) and seen["bytes"] < full["bytes"]


def kb_fast_one_shot(
    tmp_path: Path, units_file: str, source_id: str = "src-a"
) -> subprocess.CompletedProcess:
    request = Request(
        op="onSourceText",
        prompt="Index",
        context=[],
        payload=OnSourceTextPayload(kbId="kb", sourceId=source_id, sourceName="a.md", unitsFile=units_file),
        paths=Paths(artifacts=str(tmp_path / "art")),
    )
    return subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.kb_fast"],
        input=encode_request(request),
        capture_output=True,
        timeout=120,
    )


def error_code(proc: subprocess.CompletedProcess) -> str:
    return json.loads(proc.stderr.decode().strip().splitlines()[-1])["code"]


UNIT = KnowledgeUnit(
    id="src-a::chunk-000::unit-000", sourceId="src-a", chunkId="src-a::chunk-000", kuType="atomic",
    role="Definition", topic="WAL mode", claim="WAL mode appends changes to a separate file.",
)  # fmt: skip


@pytest.mark.parametrize(
    "content, why",
    [
        (None, "cannot read the units file"),
        (b"\x00garbage not msgpack", "not a mrpvm-units document"),
        (msgspec.msgpack.encode({"format": "mrpvm-units", "version": 9, "sourceId": "src-a"}), "version 9"),
        (encode_handoff("src-other", "o.md", "", [UNIT]), "the request names 'src-a'"),
    ],
)
def test_a_missing_or_corrupt_units_file_is_a_structured_error(tmp_path, content, why):
    path = tmp_path / "units.msgpack"
    if content is not None:
        path.write_bytes(content)
    proc = kb_fast_one_shot(tmp_path, str(path))
    assert proc.returncode == 2, proc.stderr
    assert error_code(proc) == "INVALID_HANDOFF"
    assert why in proc.stderr.decode()


def test_a_kb_plugin_reads_a_valid_file_without_analysis_too(tmp_path):
    """`analysis` is optional (a foreign kernel or another analyser): the plugin analyses the units."""
    path = tmp_path / "units.msgpack"
    path.write_bytes(encode_handoff("src-a", "a.md", "WAL mode appends.", [UNIT], analysed=False))
    proc = kb_fast_one_shot(tmp_path, str(path))
    assert proc.returncode == 0, proc.stderr
    assert "indexed 1 units of src-a" in proc.stdout.decode()
    assert set(stored_rows(tmp_path / "art")) == {UNIT.id}


def test_decode_checks_the_analysis_matches_the_units():
    doc = msgspec.msgpack.decode(encode_handoff("s", "n", "", [UNIT]))
    doc["analysis"] = []
    with pytest.raises(HandoffError, match="0 analyses for 1 units"):
        decode_handoff(msgspec.msgpack.encode(doc))
    assert decode_handoff(encode_handoff("s", "n", "", [UNIT])).units == [UNIT]


def test_the_kernels_analysis_is_the_plugins_without_importing_them():
    """The kernel analyses with protocol.analysis alone (it never imports plugins): graded adjectives and
    irregular verbs included, as the plugins' sdk analyses them."""
    code = (
        "import sys, json; from mrpvm.protocol.analysis import terms; "
        "print(json.dumps([terms('the later, bigger ones were sent'), "
        "any(m.startswith('mrpvm.plugins') for m in sys.modules)]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    kernel_terms, imported_plugins = json.loads(out)
    from mrpvm.plugins.sdk.text import terms

    assert not imported_plugins
    assert kernel_terms == terms("the later, bigger ones were sent") == ["late", "big", "send"]


def test_a_failed_commit_raises_its_own_error_and_the_indexes_forget_the_source(
    tmp_path: Path, manifests: Path, monkeypatch: pytest.MonkeyPatch
):
    """The kb-plugins index the source while the store commits it (knowledge/in_flight.py); a commit that
    fails raises its own error (not a task group's), nothing is stored, every kb-plugin that indexed the
    source is told to remove it, and nothing is left owed."""
    from mrpvm.kernel.errors import ValidationFailed
    from mrpvm.kernel.store import Store
    from mrpvm.kernel.store_kbs import KbTables

    def refuse(self, kb_id, source, units, text=None, holder=None):
        raise ValidationFailed("refused by the test", {"source": source.id})

    monkeypatch.setattr(KbTables, "replace_source", refuse)
    home = tmp_path / "home"
    with pytest.raises(ValidationFailed, match="refused by the test"):
        ingest(home, manifests, [("tessel-build.md", TESSEL)])
    (kb_folder,) = (home / "artifacts").iterdir()
    calls = [
        json.loads(line) for line in (kb_folder / "test-kb-inline" / "calls.jsonl").read_text().splitlines()
    ]
    assert [c["action"] for c in calls] == ["upsert", "remove"] and calls[0]["sourceId"] == calls[1][
        "sourceId"
    ]
    with Store.open(home) as store:
        assert store.list_sources(kb_folder.name) == [] and store.owed_removals() == []
