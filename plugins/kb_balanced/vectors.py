"""kb-balanced's persistent vector cache: one fixed-size row per unit key in a flat file, memory-mapped.

`hdc.vectors` in the plugin's artifact folder holds, at offset key x ROW, the unit's packed topic and
claim hypervectors. Keys are the kb store's unit keys (monotonic; an upsert's keys are contiguous), so a
write is one block and a read is a memory-mapped gather: no SQL and no text index on the query path.
Rows of removed units stay as unreferenced bytes; a rolled-back write leaves rows the next write reuses.
`hdc.meta.json` records the dimensions; a file written with other dimensions is ignored (vectors are then
encoded on the fly). The dense sentence vectors (dense.py) use the same file layout under other names.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import msgspec
import numpy as np

from .hdc import CLAIM_DIM, TOPIC_DIM

TOPIC_BYTES = TOPIC_DIM // 8
ROW = TOPIC_BYTES + CLAIM_DIM // 8
FILE = "hdc.vectors"
META = "hdc.meta.json"


class Layout(msgspec.Struct, frozen=True):
    """One kind of row file: its name, its metadata file and content, and its row size in bytes."""

    file: str
    meta: str
    row: int
    description: dict[str, object] = msgspec.field(default_factory=dict)


HDC = Layout(FILE, META, ROW, {"topicDim": TOPIC_DIM, "claimDim": CLAIM_DIM, "row": ROW})


def root_of(db: sqlite3.Connection) -> Path:
    """The artifact folder of a store connection (the folder of its main database file)."""
    for _, name, path in db.execute("PRAGMA database_list"):
        if name == "main" and path:
            return Path(path).parent
    raise ValueError("the store database has no file")


class VectorFile:
    """Read and write rows by unit key; the memory map is reopened when the file grows."""

    def __init__(self, root: Path, layout: Layout = HDC):
        self.layout = layout
        self.path = root / layout.file
        self.meta_path = root / layout.meta
        self._map: np.ndarray | None = None
        self._size = -1
        self._valid: bool | None = None

    def valid(self) -> bool:
        if self._valid is None:
            try:
                self._valid = json.loads(self.meta_path.read_text()) == self.layout.description
            except (OSError, ValueError):
                self._valid = not self.path.exists()
        return self._valid

    def write(self, keys: list[int], rows: np.ndarray) -> None:
        """Write rows at their keys (runs of consecutive keys as single blocks)."""
        if not keys:
            return
        if not self.meta_path.exists():
            self.meta_path.write_text(json.dumps(self.layout.description))
            self._valid = True
        order = np.argsort(keys, kind="stable")
        ks = np.asarray(keys)[order]
        data = np.ascontiguousarray(rows[order], dtype=np.uint8)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            start = 0
            for i in range(1, len(ks) + 1):
                if i == len(ks) or ks[i] != ks[i - 1] + 1:
                    os.pwrite(fd, data[start:i].tobytes(), int(ks[start]) * self.layout.row)
                    start = i
        finally:
            os.close(fd)

    def _mapped(self) -> np.ndarray | None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return None
        if size != self._size:
            self._size = size
            row = self.layout.row
            rows = size // row
            self._map = np.memmap(self.path, dtype=np.uint8, mode="r", shape=(rows, row)) if rows else None
        return self._map

    def read(self, keys: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, found): rows[i] is key i's row when found[i] (keys past the end are not found)."""
        mapped = self._mapped() if self.valid() else None
        ks = np.asarray(keys, dtype=np.int64)
        row = self.layout.row
        if mapped is None or not len(ks):
            return np.zeros((len(ks), row), np.uint8), np.zeros(len(ks), bool)
        found = (ks > 0) & (ks < len(mapped))
        rows = np.zeros((len(ks), row), np.uint8)
        rows[found] = mapped[ks[found]]
        return rows, found


def split(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows -> (topic vectors, claim vectors)."""
    return rows[:, :TOPIC_BYTES], rows[:, TOPIC_BYTES:]


def join(topics: np.ndarray, claims: np.ndarray) -> np.ndarray:
    return np.concatenate([topics, claims], axis=1)
