"""The kernel schema from version 8 on, written once for both backends (SQLite and PostgreSQL).

Versions 1-7 were written per dialect (kernel/store_rows.py, kernel/db/pg_schema.py) and shipped, so they
stay as they are. From 8 on every migration is one list of statements both databases accept: TEXT,
BIGINT and DOUBLE PRECISION columns (SQLite reads them as TEXT, INTEGER and REAL affinity), no rowid
tricks, `ALTER TABLE ... ADD COLUMN` without constraints. Each backend appends this list to its history.
"""

from __future__ import annotations

SHARED_MIGRATIONS: list[list[str]] = [
    [  # 8: shared learning (kernel/store_learning.py): each planner's per-plugin records, per KB scope
        # (kb_key '' = sessions without a KB), once per artifacts folder and node before; the validators'
        # measured verdict counts, once a file per home; the legacy files imported (by content digest:
        # once, whichever node reads one); nodes that have not been seen for a while are forgotten
        # (kernel/store_nodes.py)
        """CREATE TABLE planner_utility (
            planner_id TEXT NOT NULL,
            kb_key TEXT NOT NULL,
            plugin_id TEXT NOT NULL,
            task TEXT NOT NULL,
            success_rate DOUBLE PRECISION NOT NULL,
            latency_ms DOUBLE PRECISION NOT NULL,
            llm_calls DOUBLE PRECISION NOT NULL,
            sufficiency DOUBLE PRECISION NOT NULL,
            samples BIGINT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (planner_id, kb_key, plugin_id, task)
        )""",
        """CREATE TABLE validator_records (
            validator_id TEXT PRIMARY KEY,
            rejected BIGINT NOT NULL,
            right_rejections BIGINT NOT NULL,
            accepted BIGINT NOT NULL,
            right_acceptances BIGINT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE learning_imports (
            digest TEXT PRIMARY KEY,
            what TEXT NOT NULL,
            node_id TEXT NOT NULL,
            records BIGINT NOT NULL,
            imported_at TEXT NOT NULL
        )""",
        "ALTER TABLE nodes ADD COLUMN forgotten_at TEXT",
    ],
    [  # 9: an owed removal may be held by a running process (kernel/holder.py): an ingest that tells the
        # kb-plugins while the store commits marks the source as owed before the notice, held by itself;
        # the commit clears it, a holder that died leaves it to be paid (knowledge/in_flight.py)
        "ALTER TABLE source_removals ADD COLUMN holder TEXT",
    ],
]
