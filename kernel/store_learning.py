"""The store's shared learning (issue 23): what each planner learned about each plugin, on every node.

A planner is a sandboxed plugin and cannot reach the store, so the protocol carries its records
(protocol/SPEC.md, `buildPlan` `learned` and `recordOutcome` `## Observation N`): the planner scores each
attempt of an outcome (its policy: what counts as success, for which task), the kernel folds the scores
into the planner's records here, as exponentially weighted moving averages, and passes the records back
in every `buildPlan`. Records are per (planner, KB scope, plugin, task); the KB scope is the turn's KB
id, or '' for sessions without a KB (as the planner's artifacts folder was per KB before).

Each fold is one atomic upsert (`INSERT ... ON CONFLICT DO UPDATE` computes the new value from the row's
current one: SQLite's write lock, PostgreSQL's row lock), and one outcome's observations (or one batch's)
are applied in one transaction in key order (two nodes folding outcomes at once never lose an update nor
deadlock).

A mixin of `Store` (kernel/store.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.protocol.document import Observation
from mrpvm.protocol.envelope import LearnedStat

from .db.base import Connection
from .errors import ValidationFailed
from .store_rows import now_iso

MAX_OBSERVATIONS = 512  # per outcome: a planner scoring more attempts than a turn makes is broken
MAX_LEARNED = 4096  # records handed to one buildPlan (the most sampled first)
MAX_CACHED = 256  # (planner, KB scope) read results kept by `learned` (all dropped when more)
_COLUMNS = "plugin_id, task, success_rate, latency_ms, llm_calls, sufficiency, samples"

# rate <- (1-a)*rate + a*success from the prior 0.5; latency and calls <- the first sample, then the same
# EWMA; sufficiency (prior 0.5) only when the observation has one.
_FOLD = (
    "INSERT INTO planner_utility (planner_id, kb_key, plugin_id, task, success_rate, latency_ms, llm_calls,"
    " sufficiency, samples, updated_at) VALUES (:planner, :kb, :plugin, :task, (1 - :a) * 0.5 + :a * :ok,"
    " :ms, :calls, COALESCE((1 - :a) * 0.5 + :a * CAST(:suf AS DOUBLE PRECISION), 0.5), 1, :at)"
    " ON CONFLICT (planner_id, kb_key, plugin_id, task) DO UPDATE SET"
    " success_rate = (1 - :a) * planner_utility.success_rate + :a * :ok,"
    " latency_ms = (1 - :a) * planner_utility.latency_ms + :a * :ms,"
    " llm_calls = (1 - :a) * planner_utility.llm_calls + :a * :calls,"
    " sufficiency = COALESCE((1 - :a) * planner_utility.sufficiency + :a * CAST(:suf AS DOUBLE PRECISION),"
    " planner_utility.sufficiency),"
    " samples = planner_utility.samples + 1, updated_at = :at"
)

# An imported record meets the one the store holds: the sample-weighted mean of both.
_MERGE = (
    "INSERT INTO planner_utility (planner_id, kb_key, plugin_id, task, success_rate, latency_ms, llm_calls,"
    " sufficiency, samples, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (planner_id, kb_key, plugin_id, task) DO UPDATE SET"
    " success_rate = (planner_utility.success_rate * planner_utility.samples"
    " + excluded.success_rate * excluded.samples) / (planner_utility.samples + excluded.samples),"
    " latency_ms = (planner_utility.latency_ms * planner_utility.samples"
    " + excluded.latency_ms * excluded.samples) / (planner_utility.samples + excluded.samples),"
    " llm_calls = (planner_utility.llm_calls * planner_utility.samples"
    " + excluded.llm_calls * excluded.samples) / (planner_utility.samples + excluded.samples),"
    " sufficiency = (planner_utility.sufficiency * planner_utility.samples"
    " + excluded.sufficiency * excluded.samples) / (planner_utility.samples + excluded.samples),"
    " samples = planner_utility.samples + excluded.samples, updated_at = excluded.updated_at"
)


class LearnedRow(msgspec.Struct, kw_only=True, frozen=True):
    """One stored record with its keys (snapshots, imports)."""

    plannerId: str
    kbKey: str
    stat: LearnedStat
    updatedAt: str = ""


def kb_key(kb_id: str | None) -> str:
    return kb_id or ""


def _stat(row: Any) -> LearnedStat:
    return LearnedStat(
        pluginId=row[0],
        task=row[1],
        successRate=float(row[2]),
        latencyMs=float(row[3]),
        llmCalls=float(row[4]),
        sufficiency=float(row[5]),
        samples=int(row[6]),
    )


class PlannerLearning:
    if TYPE_CHECKING:
        node_id: str

        def _conn(self) -> Connection: ...

        def transaction(self) -> AbstractContextManager[Connection]: ...

        def _lock_row(self, conn: Connection, table: str, key: str) -> bool: ...

        def _change_stamp(self) -> object | None: ...

    # What `learned` read, per (planner, KB scope): (stamp, records), reused while the stamp holds. The
    # stamp is this process's learning writes (`_learning_writes`, bumped by every write of the records
    # here, before its commit) read first, then the database's change stamp (SQLite: the calling thread's
    # connection and its `PRAGMA data_version`, which moves when any other connection, of this process or
    # another, commits), then the rows: a write that lands meanwhile changes one of the two by the next
    # read. No stamp (PostgreSQL: other nodes' commits are not seen so): every read goes to the database.
    _learned_cache: dict[tuple[str, str], tuple[tuple[int, object], list[LearnedStat]]]
    _learning_writes: int

    def _init_learning(self) -> None:
        self._learned_cache, self._learning_writes = {}, 0

    def _learning_written(self) -> None:
        self._learning_writes += 1

    def learned(
        self, planner_id: str, kb_id: str | None, plugin_ids: list[str] | None = None
    ) -> list[LearnedStat]:
        """The planner's records in the KB's scope (of `plugin_ids` only, when given), most sampled first.
        The records may be shared with other callers (the cache): read them, do not change them."""
        key, writes = (planner_id, kb_key(kb_id)), self._learning_writes
        stamp = self._change_stamp()
        hit = self._learned_cache.get(key)
        if stamp is not None and hit is not None and hit[0] == (writes, stamp):
            stats = hit[1]
        else:
            rows = self._conn().execute(
                f"SELECT {_COLUMNS} FROM planner_utility WHERE planner_id = ? AND kb_key = ?"
                " ORDER BY samples DESC, plugin_id, task",
                key,
            )
            stats = [_stat(r) for r in rows]
            if stamp is not None:
                if len(self._learned_cache) >= MAX_CACHED:
                    self._learned_cache.clear()
                self._learned_cache[key] = ((writes, stamp), stats)
        if plugin_ids is not None:
            wanted = set(plugin_ids)
            stats = [s for s in stats if s.pluginId in wanted]
        return stats[:MAX_LEARNED]

    def record_observations(self, planner_id: str, kb_id: str | None, observations: list[Observation]) -> int:
        """Fold one outcome's observations into the planner's records (one transaction); returns how many
        (none when the KB was deleted meanwhile: its records went with it, and must not come back)."""
        if not observations:
            return 0
        with self.transaction() as conn:
            return self._fold(conn, planner_id, kb_id, observations)

    def _fold(
        self, conn: Connection, planner_id: str, kb_id: str | None, observations: list[Observation]
    ) -> int:
        """`record_observations` inside the caller's transaction `conn`."""
        return self._fold_many(conn, planner_id, kb_id, [observations])[0]

    def _fold_many(
        self, conn: Connection, planner_id: str, kb_id: str | None, outcomes: list[list[Observation]]
    ) -> list[int]:
        """Several outcomes' observations (one outcome, or a batch: kernel/engine/outcome_batch.py) folded
        inside `conn`, all in ONE key order (the records' rows are locked in the order every fold and import
        takes them, so two nodes folding at once never deadlock), each record's samples in outcome order.
        Returns how many of each outcome were folded."""
        for observations in outcomes:
            if len(observations) > MAX_OBSERVATIONS:
                raise ValidationFailed(
                    f"{planner_id} sent {len(observations)} observations for one outcome (at most {MAX_OBSERVATIONS})",
                    {"planner": planner_id, "observations": len(observations)},
                )
        if not any(outcomes) or (kb_id is not None and not self._lock_row(conn, "kbs", kb_id)):
            return [0] * len(outcomes)
        self._learning_written()
        stamp, key = now_iso(), kb_key(kb_id)
        ordered = sorted(  # one lock order
            (
                (o.plugin, o.task, n, o.index, o)
                for n, observations in enumerate(outcomes)
                for o in observations
            ),
            key=lambda t: t[:4],
        )
        conn.executemany(  # one batch (psycopg pipelines it), applied in order
            _FOLD,
            [
                {
                    "planner": planner_id,
                    "kb": key,
                    "plugin": item.plugin,
                    "task": item.task,
                    "a": float(item.alpha),
                    "ok": float(item.success),
                    "ms": float(item.latencyMs),
                    "calls": float(item.llmCalls),
                    "suf": None if item.sufficiency is None else float(item.sufficiency),
                    "at": stamp,
                }
                for *_, item in ordered
            ],
        )
        return [len(observations) for observations in outcomes]

    def _first_import(self, conn: Connection, digest: str, what: str, records: int) -> bool:
        """Claim the import of a legacy file (by its content `digest`); False: some node imported it."""
        return bool(
            conn.execute(
                "INSERT INTO learning_imports (digest, what, node_id, records, imported_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
                (digest, what, self.node_id, records, now_iso()),
            ).rowcount
        )

    def import_learned(
        self, digest: str, planner_id: str, kb_id: str | None, stats: list[LearnedStat]
    ) -> bool:
        """Merge records learned elsewhere (a legacy utility.json) once per `digest` of their source: False
        when that digest was imported before (by any node)."""
        stamp, key = now_iso(), kb_key(kb_id)
        with self.transaction() as conn:
            if not self._first_import(conn, digest, f"{planner_id} {key or '_session'}", len(stats)):
                return False
            self._learning_written()
            conn.executemany(
                _MERGE,
                [
                    (
                        planner_id,
                        key,
                        s.pluginId,
                        s.task,
                        s.successRate,
                        s.latencyMs,
                        s.llmCalls,
                        s.sufficiency,
                        s.samples,
                        stamp,
                    )
                    for s in sorted(stats, key=lambda s: (s.pluginId, s.task))
                    if s.samples > 0
                ],
            )
        return True

    def learning_snapshot(self) -> list[LearnedRow]:
        """Every planner's records (an evaluation puts them back with `restore_learning`)."""
        rows = self._conn().execute(
            f"SELECT planner_id, kb_key, {_COLUMNS}, updated_at FROM planner_utility"
            " ORDER BY planner_id, kb_key, plugin_id, task"
        )
        return [LearnedRow(plannerId=r[0], kbKey=r[1], stat=_stat(r[2:9]), updatedAt=r[9]) for r in rows]

    def restore_learning(self, rows: list[LearnedRow]) -> None:
        """Make the records exactly `rows` again (one transaction)."""
        with self.transaction() as conn:
            self._learning_written()
            conn.execute("DELETE FROM planner_utility")
            conn.executemany(
                "INSERT INTO planner_utility (planner_id, kb_key, plugin_id, task, success_rate, latency_ms,"
                " llm_calls, sufficiency, samples, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        r.plannerId,
                        r.kbKey,
                        r.stat.pluginId,
                        r.stat.task,
                        r.stat.successRate,
                        r.stat.latencyMs,
                        r.stat.llmCalls,
                        r.stat.sufficiency,
                        r.stat.samples,
                        r.updatedAt,
                    )
                    for r in rows
                ],
            )

    # ------------------------------------------------------------------ validators (kernel/validator_records.py)

    def validator_counts(self) -> dict[str, tuple[int, int, int, int]]:
        """validator id -> (rejected, right rejections, accepted, right acceptances) as measured."""
        rows = self._conn().execute(
            "SELECT validator_id, rejected, right_rejections, accepted, right_acceptances FROM validator_records"
        )
        return {r[0]: (int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows}

    def add_validator_counts(
        self, counts: dict[str, tuple[int, int, int, int]], *, digest: str = "", what: str = ""
    ) -> bool:
        """Add measured counts (one transaction, each an atomic add). With `digest` (a legacy file's), only
        the first time: False when it was imported before."""
        stamp = now_iso()
        with self.transaction() as conn:
            if digest and not self._first_import(conn, digest, what, len(counts)):
                return False
            conn.executemany(
                "INSERT INTO validator_records (validator_id, rejected, right_rejections, accepted,"
                " right_acceptances, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (validator_id) DO UPDATE"
                " SET rejected = validator_records.rejected + excluded.rejected,"
                " right_rejections = validator_records.right_rejections + excluded.right_rejections,"
                " accepted = validator_records.accepted + excluded.accepted,"
                " right_acceptances = validator_records.right_acceptances + excluded.right_acceptances,"
                " updated_at = excluded.updated_at",
                [(v, *c, stamp) for v, c in sorted(counts.items())],
            )
        return True

    def _forget_learning(self, conn: Connection, kb_id: str) -> None:
        """A deleted KB's records go with it (inside `delete_kb`'s transaction)."""
        self._learning_written()
        conn.execute("DELETE FROM planner_utility WHERE kb_key = ?", (kb_id,))
