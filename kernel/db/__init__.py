"""The store's database backends (docs/ARCHITECTURE.md §6): SQLite, embedded, the default for one machine;
PostgreSQL (`MRPVM_STORE_URL=postgresql://…`, the optional extra `mrpvm[postgres]`) for several machines.

The store (kernel/store.py and its row modules) writes one SQL dialect both accept (`?` placeholders,
`ON CONFLICT`, `RETURNING`, ordering by stored columns); a backend owns only what differs: connections and
transactions, placeholder spelling, the DDL and its version bookkeeping, error mapping, row locks and
change notices. Nothing outside kernel/store*.py and this package writes SQL against the kernel database.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import StoreError
from ..home import DB_NAME as DB_NAME  # the home's facts, stated where `mrpvm ask`'s thin path reads them
from ..home import URL_VARIABLE as URL_VARIABLE
from .base import Database, describe_url

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def store_location(home: Path | str, url: str = "") -> tuple[str, str]:
    """(backend, where) the store of `home` would use, without connecting; never with credentials."""
    url = url.strip()
    if url.startswith(POSTGRES_SCHEMES):
        return "postgresql", describe_url(url)
    path = Path(url[len("sqlite:") :]) if url.startswith("sqlite:") else Path(home) / DB_NAME
    return "sqlite", f"sqlite:{path}"


def open_database(home: Path | str, url: str = "") -> Database:
    """The database a store at `home` uses: PostgreSQL when `url` names one, else `<home>/mrpvm.db`."""
    url = url.strip()
    if url.startswith(POSTGRES_SCHEMES):
        from .postgres import PostgresDatabase

        return PostgresDatabase(url)
    if url and not url.startswith("sqlite:"):
        raise StoreError(
            f"{URL_VARIABLE} must be a postgresql:// URL or sqlite:PATH (got {describe_url(url)})",
            {"url": describe_url(url)},
        )
    from .sqlite import SqliteDatabase

    path = Path(url[len("sqlite:") :]) if url else Path(home) / DB_NAME
    return SqliteDatabase(path)


__all__ = ["DB_NAME", "URL_VARIABLE", "Database", "describe_url", "open_database", "store_location"]
