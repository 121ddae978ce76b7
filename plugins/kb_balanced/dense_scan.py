"""The mounted KB's dense rows as a warm worker keeps them, once per index generation.

A retrieval over a KB small enough to scan reads every unit's dense row (retriever.py's nearest-neighbour
scan); the same rows are then the candidates' vectors for the score fusion. Both come from one `DenseScan`
built when the store's generation moves (every KB write bumps it, and the dense rows are written inside
that write), so a call neither reopens the row file nor gathers and converts the candidates' rows again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .dense import dense_file, from_rows, pending_rows
from .vectors import VectorFile


class DenseScan:
    """Every unit's dense vector (float32 rows in `ids` order), which rows are still pending, and the row
    of each unit key."""

    __slots__ = ("ids", "matrix", "pending", "position")

    def __init__(self, keys: list[int], ids: list[str], rows: np.ndarray):
        self.ids = ids
        self.matrix = from_rows(rows)
        self.pending = pending_rows(rows)
        self.position = {key: i for i, key in enumerate(keys)}

    def stored(self, keys: list[int]) -> tuple[np.ndarray, np.ndarray] | None:
        """(vectors, stored) of the units with these keys, as the row file would give them (a pending row
        is not stored); None when a key is not in the scan."""
        at = [self.position.get(key, -1) for key in keys]
        if min(at, default=0) < 0:
            return None
        return self.matrix[at], ~self.pending[at]


def generation_dense_file(state: dict[str, Any], root: Path, generation: int) -> VectorFile:
    """The KB's dense row file, opened (and its metadata checked) once per root and generation."""
    kept: dict[str, Any] = state.setdefault("kb_balanced.dense_file", {})
    key = (str(root), generation)
    if kept.get("key") != key:
        kept["key"], kept["value"] = key, dense_file(root)
    return kept["value"]
