"""Whether a one-turn process's question is among the home's recent turns, read before the kernel loads.

`mrpvm ask` (shells/cli/fast_ask.py) asks this before its workers' early launch: a question no recent turn
asked has no vector kept by any plugin, so each worker that encodes it (kb-balanced's query, gs-symbolic's
meaning judges) would load its sentence model inside that call, one after the other on the turn's critical
path (~0.13 + ~0.2 s of a loaded 2-core machine; bench/ISSUE22_FIGURES.md, perf65). Told so
(early_launch.NEW_QUESTION_FLAG), they load it at once, beside the turn's first stages; the same question
asked again (the vectors kept) loads nothing, as before. SQLite only, read-only, sqlite3 alone imported.
"""

from __future__ import annotations

import os
import sqlite3

from .home import DB_NAME, URL_VARIABLE

WINDOW = 500  # the last turns looked at (their rowid order: the order they were stored in)


def asked_lately(home: str, question: str) -> bool | None:
    """True when one of the home's last WINDOW turns asked exactly `question`, False when none did; None
    when it cannot say (no SQLite store in the home yet, a store elsewhere, any error)."""
    if os.environ.get(URL_VARIABLE):
        return None
    path = os.path.join(home, DB_NAME)
    if not os.path.isfile(path):
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.05)
        try:
            row = db.execute(
                "SELECT 1 FROM (SELECT user_message FROM turns ORDER BY rowid DESC LIMIT ?) "
                "WHERE user_message = ? LIMIT 1",
                (WINDOW, question),
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return row is not None
