"""The store's planner-level records (the EWMA the kernel ranks planners by), the LLM response cache and the
LLM role settings (DS028: kernel/llm/settings.py reads and writes them as string values by key).

A mixin of `Store` (kernel/store.py): both are small tables the engine and the bridge read and write
through the store's connection and transactions.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from .db.base import Connection
from .errors import ValidationFailed
from .records import PlannerOutcome, PlannerStats
from .store_rows import now_iso


class PlannerStatsAndCache:
    if TYPE_CHECKING:

        def _conn(self) -> Connection: ...

        def transaction(self) -> AbstractContextManager[Connection]: ...

    # ------------------------------------------------------------------ planner-level stats

    def planner_stats(self) -> dict[str, PlannerStats]:
        rows = self._conn().execute(
            "SELECT planner_id, success_rate, latency_ms, samples, updated_at FROM planner_stats"
        )
        return {
            r[0]: PlannerStats(plannerId=r[0], successRate=r[1], latencyMs=r[2], samples=r[3], updatedAt=r[4])
            for r in rows
        }

    def restore_planner_stats(self, stats: dict[str, PlannerStats]) -> None:
        """Put the planner-level records back as `planner_stats()` returned them (an evaluation measures
        each suite from the same records and leaves the home's records as it found them)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM planner_stats")
            conn.executemany(
                "INSERT INTO planner_stats (planner_id, success_rate, latency_ms, samples, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [(s.plannerId, s.successRate, s.latencyMs, s.samples, s.updatedAt) for s in stats.values()],
            )

    def record_planner_outcome(
        self, planner_id: str, success: bool, latency_ms: float, alpha: float = 0.3
    ) -> PlannerStats:
        """EWMA update: rate <- (1-a)*rate + a*success (prior 0.5); latency <- first sample, then EWMA."""
        if not 0.0 < alpha <= 1.0:
            raise ValidationFailed(f"alpha must be in (0, 1], got {alpha}")
        with self.transaction() as conn:
            self._apply_planner_outcome(
                conn, PlannerOutcome(planner_id, success, latency_ms), alpha, now_iso()
            )
            row = conn.execute(
                "SELECT success_rate, latency_ms, samples, updated_at FROM planner_stats WHERE planner_id = ?",
                (planner_id,),
            ).fetchone()
        return PlannerStats(
            plannerId=planner_id, successRate=row[0], latencyMs=row[1], samples=row[2], updatedAt=row[3]
        )

    # EWMA in one statement: rate <- (1-a)*rate + a*success from the prior 0.5; latency <- the first
    # sample, then (1-a)*latency + a*sample.
    _PLANNER_UPSERT = (
        "INSERT INTO planner_stats (planner_id, success_rate, latency_ms, samples, updated_at)"
        " VALUES (:id, (1 - :a) * 0.5 + :a * :ok, :ms, 1, :at)"
        " ON CONFLICT(planner_id) DO UPDATE SET success_rate = (1 - :a) * planner_stats.success_rate + :a * :ok,"
        " latency_ms = (1 - :a) * planner_stats.latency_ms + :a * :ms, samples = planner_stats.samples + 1,"
        " updated_at = :at"
    )

    @classmethod
    def _apply_planner_outcome(
        cls, conn: Connection, outcome: PlannerOutcome, alpha: float, stamp: str
    ) -> None:
        conn.execute(
            cls._PLANNER_UPSERT,
            {
                "id": outcome.plannerId,
                "a": float(alpha),
                "ok": 1.0 if outcome.success else 0.0,
                "ms": float(outcome.latencyMs),
                "at": stamp,
            },
        )

    # ------------------------------------------------------------------ LLM cache (used by the bridge)

    def cache_get(self, key: str) -> str | None:
        row = self._conn().execute("SELECT response FROM llm_cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def cache_put(self, key: str, model: str, response: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO llm_cache (key, model, response, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(key) DO UPDATE SET model = excluded.model, response = excluded.response,"
                " created_at = excluded.created_at",
                (key, model, response, now_iso()),
            )

    # ------------------------------------------------------------------ settings (kernel/llm/settings.py)

    def get_setting(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM llm_settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO llm_settings (key, value, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, value, now_iso()),
            )
