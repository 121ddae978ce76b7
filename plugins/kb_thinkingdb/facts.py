"""Where kb-thinkingdb's stated facts live: in memory (request units) and in a SQLite fact table (the KB).

Only Knowledge Units with Subject/Relation/Object become facts. The persistent table `tdb_facts` sits in
this plugin's private kb store (plugins/kb_common, `units.sqlite` in the artifact folder) and is written
by the store's write hook, inside the same transaction that replaces or removes a source's units, so the
facts never disagree with the indexed units. The units themselves are read back from the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Protocol

from mrpvm.plugins.kb_common import NewUnit, OldUnit
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.vocab import RELATIONS

from .closure import BaseFact, entity_key


def unit_fact(unit: KnowledgeUnit, order: int) -> BaseFact | None:
    """The stated fact of a unit, if it carries a complete triple with a known relation."""
    if not (unit.subject and unit.relation and unit.object) or unit.relation not in RELATIONS:
        return None
    confidence = unit.confidence if unit.confidence is not None else 1.0
    return BaseFact(
        unit.subject,
        unit.relation,
        unit.object,
        unit.id,
        unit.body,
        confidence,
        order,
        entity_key(unit.subject),
        entity_key(unit.object),
    )


class FactSource(Protocol):
    def known_keys(self, candidates: set[str]) -> set[str]:
        """Which of these entity keys occur as a subject or object."""
        ...

    def facts_from(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        """Facts whose subject is one of the keys (of one relation, if given)."""
        ...

    def facts_into(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        """Facts whose object is one of the keys (of one relation, if given)."""
        ...


class MemoryFacts:
    """Facts of the units carried inline by a request (current-turn and session KUs)."""

    def __init__(self, units: Iterable[KnowledgeUnit]):
        self.by_subject: dict[str, list[BaseFact]] = {}
        self.by_object: dict[str, list[BaseFact]] = {}
        self.count = 0
        for idx, unit in enumerate(units):
            fact = unit_fact(unit, unit.position(idx))
            if fact is None:
                continue
            self.by_subject.setdefault(fact.skey, []).append(fact)
            self.by_object.setdefault(fact.okey, []).append(fact)
            self.count += 1

    def known_keys(self, candidates: set[str]) -> set[str]:
        return {k for k in candidates if k in self.by_subject or k in self.by_object}

    def facts_from(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        return [
            f for k in keys for f in self.by_subject.get(k, ()) if relation is None or f.relation == relation
        ]

    def facts_into(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        return [
            f for k in keys for f in self.by_object.get(k, ()) if relation is None or f.relation == relation
        ]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS tdb_facts (
    unit_key INTEGER NOT NULL,
    unit_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    relation TEXT NOT NULL,
    object TEXT NOT NULL,
    skey TEXT NOT NULL,
    okey TEXT NOT NULL,
    confidence REAL NOT NULL,
    ord INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS tdb_facts_by_subject
    ON tdb_facts(skey, relation, okey, subject, object, unit_id, confidence, ord);
CREATE INDEX IF NOT EXISTS tdb_facts_by_object
    ON tdb_facts(okey, relation, skey, subject, object, unit_id, confidence, ord);
CREATE INDEX IF NOT EXISTS tdb_facts_unit ON tdb_facts(unit_key);
"""

_CHUNK = 500  # keys per IN (...) query, below SQLite's variable limit
# The two indexes cover every column a walk reads, so a lookup never touches the table itself.


def write_facts(db: sqlite3.Connection, old: Iterable[OldUnit], new: Iterable[NewUnit]) -> int:
    """The kb store's write hook: inside its transaction, drop the facts of replaced units, add the new ones."""
    for statement in _SCHEMA.strip().split(";"):
        if statement.strip():
            db.execute(statement)
    db.executemany("DELETE FROM tdb_facts WHERE unit_key = ?", ((o.key,) for o in old))
    rows = []
    for n in new:
        fact = unit_fact(n.unit, n.unit.position(n.key))
        if fact is None:
            continue
        rows.append(
            (
                n.key,
                n.unit.id,
                fact.subject,
                fact.relation,
                fact.object,
                fact.skey,
                fact.okey,
                fact.confidence,
                fact.order,
            )
        )
    db.executemany("INSERT INTO tdb_facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


class SqliteFacts:
    """The persistent fact table of the mounted KB: a table beside the kb store's units, same database."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        found = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='tdb_facts'").fetchone()
        self.ready = found is not None

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM tdb_facts").fetchone()[0] if self.ready else 0

    def known_keys(self, candidates: set[str]) -> set[str]:
        found: set[str] = set()
        if not self.ready:
            return found
        for chunk in _chunks(sorted(candidates)):
            marks = ",".join("?" * len(chunk))
            for col in ("skey", "okey"):
                rows = self.db.execute(
                    f"SELECT DISTINCT {col} FROM tdb_facts WHERE {col} IN ({marks})", chunk
                )
                found.update(r[0] for r in rows)
        return found

    def _facts(self, column: str, keys: Iterable[str], relation: str | None) -> list[BaseFact]:
        out: list[BaseFact] = []
        if not self.ready:
            return out
        cols = "subject, relation, object, unit_id, '', confidence, ord, skey, okey"  # claims stay in the unit store
        for chunk in _chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            if relation is None:
                sql, args = f"SELECT {cols} FROM tdb_facts WHERE {column} IN ({marks})", chunk
            else:
                sql, args = (
                    f"SELECT {cols} FROM tdb_facts WHERE {column} IN ({marks}) AND relation = ?",
                    [*chunk, relation],
                )
            out.extend(BaseFact(*row) for row in self.db.execute(sql, args))
        return out

    def facts_from(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        return self._facts("skey", keys, relation)

    def facts_into(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        return self._facts("okey", keys, relation)


class ChainedFacts:
    """Several fact sources read as one (request units first, then the KB)."""

    def __init__(self, sources: list[FactSource]):
        self.sources = sources

    def known_keys(self, candidates: set[str]) -> set[str]:
        return set().union(*(s.known_keys(candidates) for s in self.sources)) if self.sources else set()

    def facts_from(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        keys = list(keys)
        return [f for s in self.sources for f in s.facts_from(keys, relation)]

    def facts_into(self, keys: Iterable[str], relation: str | None = None) -> list[BaseFact]:
        keys = list(keys)
        return [f for s in self.sources for f in s.facts_into(keys, relation)]


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]
