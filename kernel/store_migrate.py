"""`mrpvm store migrate`: copy a home's SQLite store into an empty PostgreSQL store (README "Running on
several machines"), as one transaction on the target.

Every table is copied whole, in an order that satisfies the foreign keys, rows in their stored order (the
target's `rowid` identity columns keep the listing order; unit keys are copied as they are and the
identity sequence moved past them). JSON SQLite may hold as text goes into BYTEA as bytes. Index
acknowledgements keep their node ids, so the node that ran the migration still owns its indexes; other
nodes rebuild theirs from the store when they start. The target must hold no KB, session or turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from .errors import StoreError
from .store import Store

BATCH = 2000
# table -> its columns, in foreign-key order; BYTEA on PostgreSQL where SQLite stores JSON as text or blob
TABLES: dict[str, list[str]] = {
    "kbs": ["id", "name", "created_at"],
    "sources": ["id", "kb_id", "name", "source_type", "hash", "bytes", "unit_count", "ingested_at"],
    "source_texts": ["source_id", "text"],
    "sessions": [
        "id",
        "kb_id",
        "preferences",
        "created_at",
        "updated_at",
        "turn_count",
        "deliberation",
        "title",
    ],
    "units": ["pk", "id", "kb_id", "session_id", "source_id", "ku_type", "hash", "claim_key", "data"],
    "turns": [
        "request_id",
        "session_id",
        "turn_index",
        "user_message",
        "response_markdown",
        "response_document",
        "trace",
        "status",
        "plugin_ids",
        "llm_calls",
        "duration_ms",
        "created_at",
        "answer_truncated",
    ],
    "planner_stats": ["planner_id", "success_rate", "latency_ms", "samples", "updated_at"],
    "llm_cache": ["key", "model", "response", "created_at"],
    "llm_settings": ["key", "value", "updated_at"],
    "nodes": ["id", "started_at", "seen_at", "forgotten_at"],
    "source_acks": ["source_id", "plugin_id", "node_id", "hash", "acked_at"],
    "source_removals": ["source_id", "plugin_id", "node_id", "kb_id", "source_name", "removed_at", "holder"],
    "planner_utility": [
        "planner_id",
        "kb_key",
        "plugin_id",
        "task",
        "success_rate",
        "latency_ms",
        "llm_calls",
        "sufficiency",
        "samples",
        "updated_at",
    ],
    "validator_records": [
        "validator_id",
        "rejected",
        "right_rejections",
        "accepted",
        "right_acceptances",
        "updated_at",
    ],
    "learning_imports": ["digest", "what", "node_id", "records", "imported_at"],
}
BYTEA = {("sessions", "preferences"), ("units", "data"), ("turns", "response_document")}
BYTEA |= {("turns", "trace"), ("turns", "plugin_ids")}
ORDER = {  # else SQLite's rowid (insertion order)
    "units": "pk",
    "turns": "session_id, turn_index",
    "source_acks": "source_id, plugin_id, node_id",  # WITHOUT ROWID tables: their key
    "source_removals": "source_id, plugin_id, node_id",
}


class MigrationReport(msgspec.Struct, kw_only=True):
    source: str
    target: str
    rows: dict[str, int]


def _as_bytes(value: Any) -> Any:
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value


def migrate_store(
    source: Store, target: Store, progress: Callable[[str, int], None] | None = None
) -> MigrationReport:
    """Copy every row of `source` (SQLite) into `target` (PostgreSQL, empty) in one target transaction."""
    if source.backend != "sqlite" or target.backend != "postgresql":
        raise StoreError(
            f"migrate copies a SQLite store into PostgreSQL (got {source.backend} -> {target.backend})"
        )
    if source.schema_version() != target.schema_version():
        raise StoreError("the two stores are at different schema versions; open both with this kernel first")
    rows: dict[str, int] = {}
    with target.transaction() as out:
        for table in ("kbs", "sessions", "turns"):
            if out.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
                raise StoreError(
                    f"the target store already holds {table}: migrate only into an empty store",
                    {"target": target.describe(), "table": table},
                )
        for table, columns in TABLES.items():
            binary = [i for i, c in enumerate(columns) if (table, c) in BYTEA]
            marks = ", ".join("?" for _ in columns)
            insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
            cursor = source._conn().execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY {ORDER.get(table, 'rowid')}"
            )
            count = 0
            while batch := cursor.fetchmany(BATCH):
                if binary:
                    batch = [
                        tuple(_as_bytes(v) if i in binary else v for i, v in enumerate(row)) for row in batch
                    ]
                out.executemany(insert, batch)
                count += len(batch)
                if progress is not None:
                    progress(table, count)
            rows[table] = count
        out.execute(
            "SELECT setval(pg_get_serial_sequence('units', 'pk'), COALESCE(MAX(pk), 0) + 1, false) FROM units"
        )
    return MigrationReport(source=source.describe(), target=target.describe(), rows=rows)
