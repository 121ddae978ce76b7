"""Sentence vectors kept on disk by text, in the calling plugin's artifacts folder.

A warm worker caches what it encoded in memory, but its sibling workers, the workers after a restart and
every fresh `mrpvm ask` process encode the same texts again: a KB's sentences recur across questions, and
`mrpvm ask --source FILE` re-reads the same file's units each time (the encoding was most of such an ask's
turn). `encode_kept(texts)` reads the vectors this folder keeps and encodes only the others, which it then
keeps. Callers keep their own in-memory caches (what a worker has seen decides what it reads; this file only
spares the encoding).

The file is SQLite (WAL: concurrent workers of one plugin share it), keyed by a digest of the text and
tagged with the model's identity (another model or runtime empties it); a row is a vector's DIMENSIONS
float32 in the machine's byte order, as encoded, read back as those bytes (`get`): numpy's reader
(`encoder.encode_kept`) and the plain one (`encoder.kept_vectors`, plain.py) both start from them.
At most MAX_ROWS rows (~75 MB): the oldest go first. Any failure (a read-only folder, a corrupt or locked file)
leaves the call on plain encoding: the file is an optimisation, never a reason for a call to fail.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Sequence

from mrpvm.protocol.digests import blake2b

from .forward import DIMENSIONS

FILE = "sentence-vectors.sqlite"
MAX_ROWS = 50_000
PRUNE_EVERY = 512  # rows written between two checks of the row count
BUSY_MS = 50  # a write waits this long for a sibling's; then the vectors are simply not kept
ROW_BYTES = DIMENSIONS * 4  # float32


def _key(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class KeptVectors:
    """One artifacts folder's file of vectors (opened lazily; None-safe on every failure)."""

    def __init__(self, folder: str, identity: str, name: str = FILE):
        self.path = os.path.join(folder, name)
        self.identity = identity
        self._db: sqlite3.Connection | None = None
        self._broken = False
        self._written = 0

    def _open(self) -> sqlite3.Connection | None:
        if self._db is not None or self._broken:
            return self._db
        try:
            db = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
            row = db.execute("SELECT value FROM meta WHERE name = 'model'").fetchone()
            if row is None or row[0] != self.identity:
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    db.execute("DELETE FROM vectors")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('model', ?)", (self.identity,))
        except (sqlite3.Error, OSError):
            self._broken = True
            return None
        self._db = db
        return db

    def get(self, texts: Sequence[str]) -> dict[str, bytes]:
        """The kept rows of `texts` (absent ones, and rows of another size, are left out)."""
        db = self._open()
        if db is None or not texts:
            return {}
        by_key = {_key(t): t for t in texts}
        found: dict[str, bytes] = {}
        keys = list(by_key)
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, blob in db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                    if len(blob) == ROW_BYTES:
                        found[by_key[key]] = bytes(blob)
        except sqlite3.Error:
            return found
        return found

    def put(self, texts: Sequence[str], rows: Sequence[bytes]) -> None:
        """Keep these rows (one per text, ROW_BYTES each); a busy or failing file keeps nothing."""
        db = self._open()
        if db is None or not texts:
            return
        keyed = [(_key(t), row) for t, row in zip(texts, rows, strict=True)]
        try:
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", keyed)
                self._written += len(keyed)
                if self._written >= PRUNE_EVERY:
                    self._written = 0
                    (count,) = db.execute("SELECT count(*) FROM vectors").fetchone()
                    if count > MAX_ROWS:
                        db.execute(
                            "DELETE FROM vectors WHERE rowid IN "
                            "(SELECT rowid FROM vectors ORDER BY rowid LIMIT ?)",
                            (count - MAX_ROWS,),
                        )
        except sqlite3.Error:
            return

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
