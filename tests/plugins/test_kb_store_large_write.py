"""A kb store writes a large source in one transaction that stays in memory until it commits (no dirty page
spilled to the WAL midway, where SQLite's default 2 MiB page cache spilled a few-megabyte source), and that
transaction is still all or nothing: a write that fails before its commit leaves the previous version whole,
and a units file that is not one is refused before the store is touched. Real SQLite files and tantivy."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from kb_corpus import tree
from mrpvm.plugins.kb_common.store import KBStore, NewUnit
from mrpvm.protocol.handoff import HandoffError, decode_handoff, encode_handoff

# invented prose: a workshop's notes, varied so that every unit has its own terms
_WORDS = ("lathe", "spindle", "chuck", "collet", "tailstock", "carriage", "apron", "gib", "saddle", "quill")


def _big_source(source: str, sections: int = 30, per_section: int = 60) -> list:
    """~1,800 atomic units of ~1.2 kB each (a few megabytes of rows), under composites and an aggregate."""
    tree_sections = []
    for s in range(sections):
        items = []
        for i in range(per_section):
            n = s * per_section + i
            words = " ".join(f"{_WORDS[(n + k) % len(_WORDS)]}{(n + k) % 97}" for k in range(150))
            items.append(("Description", f"part {s}-{i}", f"The {_WORDS[i % len(_WORDS)]} holds {words}."))
        tree_sections.append((f"Section {s}", items))
    return tree(source, tree_sections)


def _wal_bytes(root: Path) -> int:
    wal = root / "units.sqlite-wal"
    return wal.stat().st_size if wal.exists() else 0


def _stored(root: Path, source: str) -> set[str]:
    db = sqlite3.connect(root / "units.sqlite")
    try:
        return {row[0] for row in db.execute("SELECT hash FROM units WHERE source=?", (source,))}
    finally:
        db.close()


def test_a_large_write_spills_nothing_to_the_wal_before_its_commit(tmp_path):
    units = _big_source("workshop")
    store = KBStore(tmp_path / "kb")
    before = _wal_bytes(tmp_path / "kb")
    seen: list[int] = []

    def at_commit(_db, _old, new: list[NewUnit]) -> None:  # runs inside the transaction, before COMMIT
        seen.append(_wal_bytes(tmp_path / "kb"))

    removed, added = store.upsert("workshop", "workshop.md", units, at_commit)
    assert (removed, added) == (0, len(units)) and len(units) > 1500
    assert seen == [before]  # every dirty page was still in the connection's cache
    assert _wal_bytes(tmp_path / "kb") > 4_000_000  # the commit wrote the source's pages: a large write


def test_a_write_that_fails_before_its_commit_keeps_the_previous_version(tmp_path):
    first = _big_source("workshop", sections=10)
    second = _big_source("workshop", sections=20)
    store = KBStore(tmp_path / "kb")
    store.upsert("workshop", "workshop.md", first)
    kept = _stored(tmp_path / "kb", "workshop")

    def crash(_db, _old, _new) -> None:
        raise RuntimeError("the worker dies before its commit")

    with pytest.raises(RuntimeError):
        store.upsert("workshop", "workshop.md", second, crash)
    store.close()
    assert _stored(tmp_path / "kb", "workshop") == kept
    reopened = KBStore(tmp_path / "kb")  # a restarted worker reads the previous version whole
    assert reopened.search({"lathe0": 1.0}, 5) or reopened.search({"spindle1": 1.0}, 5)
    assert _stored(tmp_path / "kb", "workshop") == kept


def test_a_broken_units_file_is_refused_before_the_store_is_touched(tmp_path):
    units = _big_source("workshop", sections=5)
    store = KBStore(tmp_path / "kb")
    store.upsert("workshop", "workshop.md", units)
    kept = _stored(tmp_path / "kb", "workshop")
    data = encode_handoff("workshop", "workshop.md", "", _big_source("workshop", sections=8))
    for broken in (data[: len(data) // 2], b"\x00" + data[1:], os.urandom(64)):
        with pytest.raises(HandoffError):
            decode_handoff(broken, "workshop")
    with pytest.raises(HandoffError):  # another source's file
        decode_handoff(data, "lathe-notes")
    assert _stored(tmp_path / "kb", "workshop") == kept
