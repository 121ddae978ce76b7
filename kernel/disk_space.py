"""Making room on a full disk: a KB's plugin artifacts (its indexes, usually most of its size) are removed
before anything needs the database, which on a full disk cannot even open (SQLite must create its -shm).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from urllib.parse import quote


def kb_id_offline(db_path: Path, name_or_id: str) -> str | None:
    """A KB's id read from the database file as it is on disk (`immutable`: no -shm or -wal is created,
    so this works on a full disk; what a crashed writer left in the WAL is not seen)."""
    if not db_path.is_file():
        return None
    uri = f"file:{quote(str(db_path))}?immutable=1"
    try:
        with sqlite3.connect(uri, uri=True) as conn:
            row = conn.execute(
                "SELECT id FROM kbs WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1",
                (name_or_id, name_or_id, name_or_id),
            ).fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def free_kb_artifacts(home: Path, db_path: Path, name_or_id: str) -> bool:
    """Remove the artifacts of the KB `name_or_id` (the first step of `kb rm`); whether any were there."""
    kb_id = kb_id_offline(db_path, name_or_id)
    folder = Path(home) / "artifacts" / kb_id if kb_id else None
    if folder is None or not folder.is_dir():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True
