"""Whether an artifact folder holds a kb store, or this process has one open, without loading the store.

store.py (SQLite, pathlib, tantivy's wrapper) is imported only when a retrieve has a store to read: a
worker answering from a session's inline units alone (a cold `mrpvm ask --source`) never loads it, which is
~6 ms of such a worker's start (sqlite3 1.7, pathlib with urllib.parse and ipaddress 3.7).
"""

from __future__ import annotations

import os
from typing import Any

UNITS_FILE = "units.sqlite"
STATE_KEY = "kb_common.stores"  # Call.state key of the stores this process keeps open (str(root) -> KBStore)


def store_exists(root: str | os.PathLike[str]) -> bool:
    """The folder holds a store's unit table."""
    return os.path.isfile(os.path.join(root, UNITS_FILE))


def store_known(state: dict[str, Any], root: str | os.PathLike[str]) -> bool:
    """A retrieve with create=False gets a store for `root`: one is open in `state`, or its folder holds one
    (store.open_store's rule, read without importing store.py)."""
    return str(root) in state.get(STATE_KEY, {}) or store_exists(root)
