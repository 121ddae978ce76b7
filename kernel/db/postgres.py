"""The server backend: PostgreSQL through psycopg 3 and a connection pool (`pip install 'mrp-vm[postgres]'`).

- The store's SQL is written once with `?` / `:name` placeholders; `translate` spells them `%s` /
  `%(name)s` (and doubles a literal `%`). Statements are cached per text.
- Pool connections run in autocommit: a statement outside a transaction borrows a connection for itself
  (its rows are fetched before the connection goes back); `transaction()` holds one connection for its
  block, and every store call in that thread inside the block uses it.
- Isolation is READ COMMITTED, so there is no global write lock as on SQLite: a read-then-write that must
  not interleave takes a row lock first (`lock_row`: `FOR NO KEY UPDATE`, which still lets other
  transactions insert rows referencing the locked one).
- The schema version lives in `mrpvm_schema`; each migration is one transaction under an advisory lock
  (PostgreSQL's DDL is transactional, so a failed migration leaves the previous version).
- Change notices: `pg_notify` inside the writing transaction (delivered on commit); `Listener` waits
  for them on its own connection.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from ..errors import StoreError
from .base import describe_url

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - the optional extra is missing
    psycopg = None  # type: ignore[assignment]
    ConnectionPool = None  # type: ignore[assignment,misc]

POOL_MAX = 10  # connections per process; a daemon's store calls are short
POOL_TIMEOUT_S = 30.0
MIGRATION_LOCK = 0x6D7270766D  # 'mrpvm': the advisory lock migrations take
_TOKEN = re.compile(r"'(?:[^']|'')*'|::|\?|:[A-Za-z_]\w*|%")


@lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """`?` -> `%s`, `:name` -> `%(name)s`, `%` -> `%%` (no placeholder inside quoted literals; `::` casts
    untouched)."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        if token.startswith(":") and token != "::":
            return f"%({token[1:]})s"
        return token.replace("%", "%%")  # psycopg reads `%` inside quoted literals too

    return _TOKEN.sub(one, sql)


class _Rows:
    """A statement's result fetched whole (its connection is already back in the pool)."""

    def __init__(self, rows: list[Any], rowcount: int):
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return list(self._rows)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


def _store_error(err: Exception) -> StoreError:
    return StoreError(f"PostgreSQL: {str(err).strip()}", {"sqlstate": getattr(err, "sqlstate", None)})


class PgConnection:
    """One pooled connection inside a transaction, speaking the store's placeholder style."""

    def __init__(self, raw: Any):
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        try:
            return self.raw.execute(translate(sql), params)
        except psycopg.OperationalError as err:
            raise _store_error(err) from None

    def executemany(self, sql: str, rows: Any) -> Any:
        cursor = self.raw.cursor()
        try:
            cursor.executemany(translate(sql), list(rows))
        except psycopg.OperationalError as err:
            raise _store_error(err) from None
        return cursor


class _Autocommit:
    """Statements outside a transaction: each borrows a pool connection for itself."""

    def __init__(self, pool: Any):
        self._pool = pool

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> _Rows:
        try:
            with self._pool.connection() as raw:
                cursor = raw.execute(translate(sql), params)
                return _Rows(cursor.fetchall() if cursor.description else [], cursor.rowcount)
        except psycopg.OperationalError as err:
            raise _store_error(err) from None

    def executemany(self, sql: str, rows: Any) -> _Rows:
        try:
            with self._pool.connection() as raw, raw.transaction():
                cursor = raw.cursor()
                cursor.executemany(translate(sql), list(rows))
                return _Rows([], cursor.rowcount)
        except psycopg.OperationalError as err:
            raise _store_error(err) from None


class PostgresDatabase:
    kind = "postgresql"

    def __init__(self, url: str, *, pool_max: int = POOL_MAX):
        if psycopg is None:
            raise StoreError(
                "MRPVM_STORE_URL names PostgreSQL but psycopg is not installed: pip install 'mrp-vm[postgres]'"
            )
        self.url = url
        self.integrity_errors: tuple[type[BaseException], ...] = (psycopg.IntegrityError,)
        self._local = threading.local()
        try:
            self._pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max(1, pool_max),
                kwargs={"autocommit": True},
                timeout=POOL_TIMEOUT_S,
                open=False,
                name="mrpvm-store",
            )
            self._pool.open(wait=True, timeout=POOL_TIMEOUT_S)
        except (psycopg.Error, Exception) as err:
            raise StoreError(
                f"cannot connect to the store {describe_url(url)}: {str(err).strip()}",
                {"store": describe_url(url)},
            ) from None
        self._autocommit = _Autocommit(self._pool)

    def describe(self) -> str:
        return describe_url(self.url)

    def connection(self) -> PgConnection | _Autocommit:
        return getattr(self._local, "tx", None) or self._autocommit

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        if getattr(self._local, "tx", None) is not None:
            raise StoreError("a store transaction is already open in this thread")
        try:
            with self._pool.connection() as raw, raw.transaction():
                conn = PgConnection(raw)
                self._local.tx = conn
                try:
                    yield conn
                finally:
                    self._local.tx = None
        except psycopg.OperationalError as err:
            raise _store_error(err) from None

    def change_stamp(self) -> None:
        """None: other nodes' commits have no stamp here (a reader reads again)."""
        return None

    def schema_version(self) -> int:
        conn = self.connection()
        if conn.execute("SELECT to_regclass('mrpvm_schema') IS NOT NULL").fetchone()[0] is not True:
            return 0
        row = conn.execute("SELECT version FROM mrpvm_schema").fetchone()
        return int(row[0]) if row else 0

    def migrate(self, migrations: list[list[str]]) -> None:
        version = self.schema_version()
        while version < len(migrations):
            with self.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS mrpvm_schema (version INTEGER NOT NULL)")
                row = conn.execute("SELECT version FROM mrpvm_schema").fetchone()
                if row is None:
                    conn.execute("INSERT INTO mrpvm_schema (version) VALUES (0)")
                version = int(row[0]) if row else 0
                if version >= len(migrations):
                    break
                for statement in migrations[version]:
                    conn.execute(statement)
                conn.execute("UPDATE mrpvm_schema SET version = ?", (version + 1,))
            version += 1

    def integrity_check(self) -> list[str]:
        """The server enforces every constraint as it writes; this checks that it answers."""
        self.connection().execute("SELECT 1").fetchone()
        return []

    def lock_row(self, conn: Any, table: str, key: str) -> bool:
        return (
            conn.execute(f"SELECT 1 FROM {table} WHERE id = ? FOR NO KEY UPDATE", (key,)).fetchone()
            is not None
        )

    def notify(self, conn: Any, channel: str, payload: str) -> None:
        conn.execute("SELECT pg_notify(?, ?)", (channel, payload))

    def listener(self, channel: str) -> Listener:
        return Listener(self.url, channel)

    def checkpoint_in_background(self) -> None:
        """The server checkpoints by itself: nothing to move off the committing thread."""

    def close(self, *, ending: bool = False) -> None:
        self._pool.close()


class Listener:
    """LISTEN on its own connection; `wait` returns the payloads that arrived (none after `timeout`)."""

    def __init__(self, url: str, channel: str):
        self._conn = psycopg.connect(url, autocommit=True)
        self._conn.execute(f"LISTEN {channel}")

    def wait(self, timeout: float) -> list[str]:
        first = [n.payload for n in self._conn.notifies(timeout=timeout, stop_after=1)]
        if first:  # drain what came with it, without waiting again
            first += [n.payload for n in self._conn.notifies(timeout=0.01)]
        return first

    def close(self) -> None:
        self._conn.close()
