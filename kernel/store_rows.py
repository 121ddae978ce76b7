"""The kernel database's rows (docs/ARCHITECTURE.md §6): the schema and its migrations, how ids, hashes and
deduplication keys are made, and how units become rows (a session holds a statement once).

store.py opens the database and runs the transactions; this module knows what the tables hold.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins

from .db.base import Connection
from .db.shared_schema import SHARED_MIGRATIONS
from .errors import ValidationFailed

IN_CHUNK = 500  # keys per `IN (...)` lookup (SQLite's bound-parameter limit is far above)
# a removal owed by (source, plugin, node); `holder` is the process whose ingest in flight holds it
# (kernel/holder.py, knowledge/in_flight.py), NULL when it is owed outright (a source removed)
OWE_REMOVAL = (
    "INSERT INTO source_removals (source_id, plugin_id, node_id, kb_id, source_name, removed_at, holder)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, plugin_id, node_id)"
    " DO UPDATE SET source_name = excluded.source_name, removed_at = excluded.removed_at,"
    " holder = excluded.holder"
)

# --------------------------------------------------------------------------- schema

# Each entry migrates the schema from version i to i+1. Never edit a shipped entry: append a new one.
MIGRATIONS: list[list[str]] = [
    [  # 1: the initial schema
        """CREATE TABLE kbs (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE sources (
            id TEXT PRIMARY KEY,
            kb_id TEXT NOT NULL REFERENCES kbs(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            source_type TEXT NOT NULL DEFAULT 'text',
            hash TEXT NOT NULL,
            bytes INTEGER NOT NULL DEFAULT 0,
            unit_count INTEGER NOT NULL DEFAULT 0,
            ingested_at TEXT NOT NULL,
            UNIQUE (kb_id, name)
        )""",
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            kb_id TEXT REFERENCES kbs(id) ON DELETE SET NULL,
            preferences TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            turn_count INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE units (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL,
            kb_id TEXT REFERENCES kbs(id) ON DELETE CASCADE,
            session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
            source_id TEXT REFERENCES sources(id) ON DELETE CASCADE,
            ku_type TEXT NOT NULL,
            hash TEXT,
            claim_key TEXT NOT NULL,
            data BLOB NOT NULL,
            CHECK ((kb_id IS NULL) <> (session_id IS NULL))
        )""",
        "CREATE UNIQUE INDEX units_kb_id ON units(kb_id, id) WHERE kb_id IS NOT NULL",
        "CREATE UNIQUE INDEX units_session_id ON units(session_id, id) WHERE session_id IS NOT NULL",
        "CREATE INDEX units_source ON units(source_id)",
        "CREATE INDEX units_kb_type ON units(kb_id, ku_type)",
        "CREATE INDEX units_hash ON units(hash)",
        "CREATE INDEX units_session_claim ON units(session_id, claim_key)",
        """CREATE TABLE turns (
            request_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_index INTEGER NOT NULL,
            user_message TEXT NOT NULL,
            response_markdown TEXT NOT NULL,
            response_document BLOB NOT NULL,
            trace BLOB NOT NULL,
            status TEXT NOT NULL,
            plugin_ids TEXT NOT NULL DEFAULT '{}',
            llm_calls INTEGER NOT NULL DEFAULT 0,
            duration_ms REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, turn_index)
        )""",
        """CREATE TABLE planner_stats (
            planner_id TEXT PRIMARY KEY,
            success_rate REAL NOT NULL,
            latency_ms REAL NOT NULL,
            samples INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE llm_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            response TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
    ],
    [  # 2: only the indexes queries and cascades use (units_kb_type and units_hash had no reader), partial
        # where the column is NULL for half the rows, and session dedup by indexed lookups
        "DROP INDEX units_kb_type",
        "DROP INDEX units_hash",
        "DROP INDEX units_source",
        "DROP INDEX units_session_claim",
        "CREATE INDEX units_source ON units(source_id) WHERE source_id IS NOT NULL",
        "CREATE INDEX units_session_claim ON units(session_id, claim_key) WHERE session_id IS NOT NULL",
        "CREATE INDEX units_session_hash ON units(session_id, hash)"
        " WHERE session_id IS NOT NULL AND hash IS NOT NULL",
    ],
    [  # 3: which kb-plugin indexed which source version, and removals not yet acknowledged
        # (knowledge/index_ledger.py). Sources stored before are taken as indexed by every plugin ('*').
        """CREATE TABLE source_acks (
            source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            plugin_id TEXT NOT NULL,
            hash TEXT NOT NULL,
            acked_at TEXT NOT NULL,
            PRIMARY KEY (source_id, plugin_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE source_removals (
            source_id TEXT NOT NULL,
            plugin_id TEXT NOT NULL,
            kb_id TEXT NOT NULL REFERENCES kbs(id) ON DELETE CASCADE,
            source_name TEXT NOT NULL,
            removed_at TEXT NOT NULL,
            PRIMARY KEY (source_id, plugin_id)
        ) WITHOUT ROWID""",
        "CREATE INDEX source_removals_kb ON source_removals(kb_id)",
        "INSERT INTO source_acks (source_id, plugin_id, hash, acked_at)"
        " SELECT id, '*', hash, ingested_at FROM sources",
    ],
    [  # 4: a session's deliberation level (its preference; 0 = answer with the first accepted answer) and
        # the raw text of each source (KB export carries it; a source stored before has none)
        "ALTER TABLE sessions ADD COLUMN deliberation INTEGER NOT NULL DEFAULT 0",
        """CREATE TABLE source_texts (
            source_id TEXT PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
            text TEXT NOT NULL
        )""",
    ],
    [  # 5: a turn whose answer was stored cut to the stored-answer cap (kernel/engine/stored_answer.py)
        "ALTER TABLE turns ADD COLUMN answer_truncated INTEGER NOT NULL DEFAULT 0",
    ],
    [  # 6: a session's title (the web app names sessions; empty = untitled)
        "ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT ''",
    ],
    [  # 7: several machines (kernel/db/): acknowledgements and owed removals per node (an index is
        # node-local); the nodes that have opened the store; LLM role settings as a store table (the
        # table kernel/llm/settings.py used to create beside the store is adopted as it is). Rows from
        # before carry the node '' (knowledge/index_ledger.py: a node adopts them when it holds the index).
        """CREATE TABLE IF NOT EXISTS llm_settings (
            key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at TEXT NOT NULL
        )""",
        "CREATE TABLE nodes (id TEXT PRIMARY KEY, started_at TEXT NOT NULL, seen_at TEXT NOT NULL)",
        """CREATE TABLE source_acks_7 (
            source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            plugin_id TEXT NOT NULL,
            node_id TEXT NOT NULL,
            hash TEXT NOT NULL,
            acked_at TEXT NOT NULL,
            PRIMARY KEY (source_id, plugin_id, node_id)
        ) WITHOUT ROWID""",
        "INSERT INTO source_acks_7 SELECT source_id, plugin_id, '', hash, acked_at FROM source_acks",
        "DROP TABLE source_acks",
        "ALTER TABLE source_acks_7 RENAME TO source_acks",
        """CREATE TABLE source_removals_7 (
            source_id TEXT NOT NULL,
            plugin_id TEXT NOT NULL,
            node_id TEXT NOT NULL,
            kb_id TEXT NOT NULL REFERENCES kbs(id) ON DELETE CASCADE,
            source_name TEXT NOT NULL,
            removed_at TEXT NOT NULL,
            PRIMARY KEY (source_id, plugin_id, node_id)
        ) WITHOUT ROWID""",
        "INSERT INTO source_removals_7 SELECT source_id, plugin_id, '', kb_id, source_name, removed_at"
        " FROM source_removals",
        "DROP TABLE source_removals",
        "ALTER TABLE source_removals_7 RENAME TO source_removals",
        "CREATE INDEX source_removals_kb ON source_removals(kb_id)",
    ],
    *SHARED_MIGRATIONS,  # 8 on: one text for both backends
]
SCHEMA_VERSION = len(MIGRATIONS)

# --------------------------------------------------------------------------- ids, hashes, codecs

unit_encoder = msgspec.json.Encoder()
unit_decoder = msgspec.json.Decoder(KnowledgeUnit)
pins_decoder = msgspec.json.Decoder(Pins)
json_encoder = msgspec.json.Encoder()
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    """`<prefix>_` + 16 hex digits from the OS CSPRNG."""
    return f"{prefix}_{secrets.token_hex(8)}"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def claim_key(unit: KnowledgeUnit) -> str:
    """Deduplication key of a unit's statement: role + whitespace/case-normalized claim or procedure."""
    body = " ".join(unit.body.split()).lower()
    return hashlib.sha256(
        f"{unit.kuType}\x1f{unit.role}\x1f{body}".encode("utf-8", "surrogatepass")
    ).hexdigest()[:32]


def slug(name: str, limit: int = 40) -> str:
    """A KU-id-safe form of a source name (no spaces, no '::')."""
    base = Path(name).stem or Path(name).name or name
    out = _SLUG.sub("-", base).strip("-.")[:limit].strip("-.")
    return out or "source"


def decode_json(raw: bytes | str | None) -> Any:
    if raw is None or raw in (b"", ""):
        return {}
    return msgspec.json.decode(raw)


def pins_json(pins: Pins | None) -> bytes:
    return json_encoder.encode(pins or Pins())


# --------------------------------------------------------------------------- unit rows


def unit_row(
    unit: KnowledgeUnit, *, kb_id: str | None, session_id: str | None, source_id: str | None
) -> tuple[Any, ...]:
    return (
        unit.id,
        kb_id,
        session_id,
        source_id,
        unit.kuType,
        unit.hash,
        claim_key(unit),
        unit_encoder.encode(unit),
    )


def _session_has(conn: Connection, column: str, session_id: str, keys: set[str]) -> set[str]:
    """Which of `keys` the session already holds in `column` (id, claim_key or hash): indexed lookups,
    so a commit costs O(staged units · log n), not a scan of the session."""
    found: set[str] = set()
    ordered = sorted(keys)
    for start in range(0, len(ordered), IN_CHUNK):
        chunk = ordered[start : start + IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        found.update(
            r[0]
            for r in conn.execute(
                f"SELECT {column} FROM units WHERE session_id = ? AND {column} IN ({marks})",
                (session_id, *chunk),
            )
        )
    return found


def insert_session_units(
    conn: Connection,
    session_id: str,
    units: Iterable[KnowledgeUnit],
    *,
    empty: bool = False,
) -> list[KnowledgeUnit]:
    """Insert units not already in the session (same hash or same role+claim); returns those added.

    `empty`: the session was created in this transaction, so there is nothing to look up.
    """
    rows_in = [(u, unit_row(u, kb_id=None, session_id=session_id, source_id=None)) for u in units]
    if not rows_in:
        return []
    if empty:
        seen_claims: set[str] = set()
        seen_hashes: set[str] = set()
        seen_ids: set[str] = set()
    else:
        seen_claims = _session_has(conn, "claim_key", session_id, {r[6] for _, r in rows_in})
        hashes = {u.hash for u, _ in rows_in if u.hash}
        seen_hashes = _session_has(conn, "hash", session_id, hashes) if hashes else set()
        seen_ids = _session_has(conn, "id", session_id, {u.id for u, _ in rows_in})
    rows = []
    added: list[KnowledgeUnit] = []
    for unit, row in rows_in:
        key = row[6]
        if key in seen_claims or (unit.hash and unit.hash in seen_hashes):
            continue
        if unit.id in seen_ids:
            raise ValidationFailed(
                f"session {session_id} already holds a different unit with id '{unit.id}'",
                {"session": session_id, "unit": unit.id},
            )
        seen_claims.add(key)
        seen_ids.add(unit.id)
        if unit.hash:
            seen_hashes.add(unit.hash)
        rows.append(row)
        added.append(unit)
    conn.executemany(
        "INSERT INTO units (id, kb_id, session_id, source_id, ku_type, hash, claim_key, data)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return added
