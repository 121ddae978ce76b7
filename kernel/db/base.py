"""What every store backend provides (kernel/db/sqlite.py, kernel/db/postgres.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit


class Connection(Protocol):
    """The part of a DB-API connection the store uses; SQL is written with `?` or `:name` placeholders.
    Both return a cursor (`fetchone`, `fetchall`, iteration, `rowcount`)."""

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Any, /) -> Any: ...


class Database(Protocol):
    """One kernel database. `connection()` is the calling thread's connection (inside a transaction, that
    transaction's); `transaction()` is one write transaction, rolled back on any error."""

    kind: str  # "sqlite" or "postgresql"
    integrity_errors: tuple[type[BaseException], ...]  # constraint violations, whatever the driver

    def describe(self) -> str: ...  # where it is, without credentials

    def connection(self) -> Connection: ...

    def transaction(self) -> AbstractContextManager[Connection]: ...

    def change_stamp(self) -> object | None:
        """A value that differs once any other connection has committed to the database, as the calling
        thread's connection sees it (its own commits do not move it); None when the backend has none: a
        reader caching what it read must then read again."""
        ...

    def schema_version(self) -> int: ...

    def migrate(self, migrations: list[list[str]]) -> None: ...

    def integrity_check(self) -> list[str]: ...

    def lock_row(self, conn: Connection, table: str, key: str) -> bool:
        """Lock one row (by its `id`) until the transaction ends; False when there is no such row."""
        ...

    def notify(self, conn: Connection, channel: str, payload: str) -> None:
        """Tell other nodes, when the transaction commits, that something on `channel` changed."""
        ...

    def checkpoint_in_background(self) -> None:
        """A long-running process: its commits leave the journal's checkpoints to a thread (SQLite)."""
        ...

    def close(self, *, ending: bool = False) -> None:
        """Release the store; `ending`: the process ends right after (it may leave work to the next one)."""
        ...


def describe_url(url: str) -> str:
    """A database URL without its password (and without a query that may carry one)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if not parts.scheme:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, "", ""))
