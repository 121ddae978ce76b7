"""Session units kept by the text they came from (knowledge/kept_units.py): a repeated `--source` load of
an unchanged file by the same sd-plugin reads them back, re-keyed to its own source id, instead of calling
the plugin; a changed text, another plugin or plugin code, and a damaged entry are normalized again.

Through real plugin processes (tests/support/ingest_plugins: test-sd numbers its ids from the source id and
chunks at 8 KB, so a kept tree spans merged chunks); each load is a fresh kernel on the same home, as each
`mrpvm ask --source` is.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import msgspec
import pytest
from mrpvm.kernel.registry import load_manifest
from mrpvm.knowledge import kept_units
from mrpvm.knowledge.ingest import load_session_context
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import NormalizePayload
from test_ingest import PLUGINS, prose, run_kernel

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    """A copy of the scripted plugins' folder (its files' times identify the plugin's code)."""
    folder = tmp_path / "plugins"
    shutil.copytree(PLUGINS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _load(tmp_path: Path, plugins: Path, text: str, sd: str = "test-sd") -> tuple[list[KnowledgeUnit], str]:
    """One fresh kernel on the home loading `text` into a new session: (the session's units, source id)."""
    log = tmp_path / "logs" / "sd.jsonl"

    async def work(ctx):
        session = ctx.store.create_session()
        loaded = await load_session_context(ctx, session.id, text, "notes.md", sd_plugin=sd)
        assert [u.id for u in loaded] == [u.id for u in ctx.store.session_units(session.id)]
        return list(loaded), loaded.source_id

    return run_kernel(
        tmp_path / "home",
        work,
        enabled="test-sd,test-sd-big",
        manifests=plugins,
        plugin_env={"MRPVM_TEST_SD_LOG": str(log)},
        writable=log.parent,
    )


def _normalize_calls(tmp_path: Path) -> int:
    log = tmp_path / "logs" / "sd.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "home" / kept_units.FOLDER).glob("*.bin"))


def _anonymous(units: list[KnowledgeUnit], source_id: str) -> list[dict]:
    """The units with their source id written as SRC: what two loads of one text must share."""
    text = msgspec.json.encode(units).decode().replace(source_id, "SRC")
    return json.loads(text)


def test_a_repeated_load_reads_the_kept_units_re_keyed_to_its_own_source_id(tmp_path, plugins) -> None:
    text = prose(30, "kept")  # ~15 KB: two chunks merged into one tree
    first, first_id = _load(tmp_path, plugins, text)
    calls = _normalize_calls(tmp_path)
    assert calls >= 2 and len(_entries(tmp_path)) == 1

    again, again_id = _load(tmp_path, plugins, text)
    assert _normalize_calls(tmp_path) == calls  # the sd-plugin was not called
    assert again_id != first_id
    assert _anonymous(again, again_id) == _anonymous(first, first_id)  # the same tree under the new id
    ids = {u.id for u in again}
    assert len(ids) == len(again) and all(u.id.startswith(f"{again_id}::") for u in again)
    assert all(u.sourceId == again_id and u.chunkId.startswith(f"{again_id}::") for u in again)
    assert all(r in ids for u in again for r in [*u.parentUnitIds, *u.childUnitIds])

    # what the plugin itself makes of the text now, under a third id, is that tree too
    (tmp_path / "home" / kept_units.FOLDER / _entries(tmp_path)[0].name).unlink()
    fresh, fresh_id = _load(tmp_path, plugins, text)
    assert _normalize_calls(tmp_path) == 2 * calls
    assert _anonymous(fresh, fresh_id) == _anonymous(again, again_id)


@pytest.mark.parametrize("change", ["text", "other plugin", "plugin code", "plugin version"])
def test_a_changed_text_or_plugin_is_normalized_again(tmp_path, plugins, change) -> None:
    text = prose(4, "base")
    _load(tmp_path, plugins, text)
    calls = _normalize_calls(tmp_path)
    sd = "test-sd"
    if change == "text":
        text = text.replace("fact number 3.", "fact number 3 (revised).")
    elif change == "other plugin":
        sd = "test-sd-big"
    elif change == "plugin code":
        with (plugins / "test_sd.py").open("a") as code:
            code.write("\n# a change\n")
    else:
        manifest = json.loads((plugins / "test-sd.json").read_text())
        (plugins / "test-sd.json").write_text(json.dumps({**manifest, "version": "0.2.0"}))
    units, _ = _load(tmp_path, plugins, text, sd)
    assert _normalize_calls(tmp_path) == calls + 1
    assert len(_entries(tmp_path)) == 2  # kept under its own key beside the first
    if change == "text":
        assert any("(revised)" in (u.claim or "") for u in units)


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "empty", "valid digest, not an entry"])
def test_a_damaged_entry_is_normalized_again_and_rewritten(tmp_path, plugins, damage) -> None:
    import hashlib

    text = prose(4, "damage")
    first, first_id = _load(tmp_path, plugins, text)
    (entry,) = _entries(tmp_path)
    blob = entry.read_bytes()
    if damage == "flipped byte":
        middle = len(blob) // 2
        blob = blob[:middle] + bytes([blob[middle] ^ 0x20]) + blob[middle + 1 :]
    elif damage == "truncated":
        blob = blob[: len(blob) // 2]
    elif damage == "empty":
        blob = b""
    else:
        body = msgspec.msgpack.encode({"format": kept_units.FORMAT, "units": "none"})
        blob = hashlib.blake2b(body, digest_size=32).digest() + body
    entry.write_bytes(blob)

    again, again_id = _load(tmp_path, plugins, text)
    assert _normalize_calls(tmp_path) == 2  # one chunk, normalized twice
    assert _anonymous(again, again_id) == _anonymous(first, first_id)
    _load(tmp_path, plugins, text)  # the entry was rewritten: read back now
    assert _normalize_calls(tmp_path) == 2


def _unit(uid: str, source_id: str, claim: str = "A fact.", **refs) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid, sourceId=source_id, chunkId=f"{source_id}::chunk-000", kuType="atomic", role="Description",
        topic="fact", claim=claim, **refs,
    )  # fmt: skip


def test_a_tree_whose_ids_do_not_derive_from_its_source_id_is_not_kept(tmp_path) -> None:
    sid = "notes-0a1b2c3d"
    derived = [_unit(f"{sid}::unit-000", sid, parentUnitIds=[f"{sid}::source-summary"])]
    assert kept_units.write(tmp_path, "k1", sid, derived, ["a warning"])
    units, warnings = kept_units.read(tmp_path, "k1", "notes-99999999") or ([], [])
    assert [u.id for u in units] == ["notes-99999999::unit-000"] and warnings == ["a warning"]
    assert units[0].parentUnitIds == ["notes-99999999::source-summary"]
    assert kept_units.read(tmp_path, "another key", sid) is None

    fixed_ids = [_unit("facts::chunk-000::unit-001", sid)]  # the same ids whatever the source id
    named = [_unit(f"{sid}::unit-000", sid, claim=f"Loaded as {sid}.")]  # the id said in a claim
    for i, units in enumerate((fixed_ids, named)):
        assert not kept_units.write(tmp_path, f"bad{i}", sid, units, [])
    assert sorted(p.name for p in (tmp_path / kept_units.FOLDER).iterdir()) == ["k1.bin"]


def test_an_sd_plugin_that_calls_an_llm_is_never_kept(tmp_path) -> None:
    source = NormalizePayload(sourceId="s-1", sourceName="a.md", text="Alpha.", scope="session")
    symbolic = load_manifest(MANIFESTS / "sd-symbolic.json", builtin=True)
    llm = load_manifest(MANIFESTS / "sd-llm-fast.json", builtin=True)
    key = kept_units.cache_key(symbolic, source, {})
    assert key is not None and key == kept_units.cache_key(symbolic, source, {})
    assert key == kept_units.cache_key(symbolic, msgspec.structs.replace(source, sourceId="s-2"), {})
    assert key != kept_units.cache_key(symbolic, source, {"MRPVM_SOMETHING": "1"})
    assert kept_units.cache_key(llm, source, {}) is None


def test_at_most_max_entries_are_kept_the_least_recently_used_go(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(kept_units, "MAX_ENTRIES", 3)
    sid = "notes-0a1b2c3d"
    units = [_unit(f"{sid}::unit-000", sid)]
    folder = tmp_path / kept_units.FOLDER
    for i in range(3):
        assert kept_units.write(tmp_path, f"k{i}", sid, units, [])
        os.utime(folder / f"k{i}.bin", ns=(i * 10**9, i * 10**9))  # written in this order, seconds apart
    assert kept_units.read(tmp_path, "k0", sid) is not None  # used again: now the most recent
    assert kept_units.write(tmp_path, "k3", sid, units, [])
    assert sorted(p.stem for p in folder.glob("*.bin")) == ["k0", "k2", "k3"]
    assert folder.stat().st_mode & 0o077 == 0 and (folder / "k3.bin").stat().st_mode & 0o077 == 0
