"""The persistent KB of one kb plugin: a tantivy index (text_index.py) plus a SQLite side store of full KU records.

Layout of the plugin's artifact folder (docs/ARCHITECTURE.md §6: `<home>/artifacts/<kbId>/<pluginId>/`):

    index/          tantivy index: text fields topic/body/note/condition (pre-analysed terms), source, key
    units.sqlite    units(key, id, source, hash, level, role, acts, terms, record) -- record: msgpack KU
                    sources(id, name, units, summary, updatedAt), tagdf(field, term, df), meta(name, value)
    generation      a counter bumped after every committed change; open handles reload when it moves

An upsert replaces every unit of a source; SQLite's write lock (BEGIN IMMEDIATE) serialises writers from
several worker processes. Order: tantivy commit, then SQLite commit, then the generation bump, so a crash
can only leave index entries whose key has no record (skipped on read), never a record the index lacks.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import msgspec
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.gc_pause import paused_gc
from mrpvm.protocol.handoff import UnitAnalysis

from .fields import written_form
from .scoring import idf
from .store_files import STATE_KEY, UNITS_FILE, store_exists
from .store_generation import GENERATION_FILE, bump_generation, read_generation
from .store_tags import CountedTags, counted_stored_tags, counted_tags, tag_delta
from .text_index import ArtifactError, TextIndex

# 2: the heading field; versions and short options as terms; 3: graded adjectives; 4: comparison phrases
# read on word tokens ("3.4 and later" states a minimum; "--max-count" states none). An analysis that only
# adds terms does not bump it (protocol/handoff.py ANALYSER does move): an older index lacks them and reads
# as a collection that never wrote them (mrpvm-terms-5: "the ALL option" is found once the source is
# ingested again, `mrpvm ingest --force`). A bump changes the `indexFormat` of manifests/kb-fast.json,
# kb-balanced.json and kb-thinkingdb.json with it ("kb_common-<this>", tests/knowledge/test_index_format.py):
# each kernel then rebuilds every KB's index of these plugins as it opens (knowledge/index_format.py)
WRITE_CACHE_KIB = 32768  # the page cache ceiling of a store connection (PRAGMA cache_size, KiB)
FORMAT_VERSION = "4"
K = TypeVar("K", int, str)  # a unit's store key or its KU id
_DF_FIELDS = ("topic", "heading", "body")  # the fields `text_df` reads a term's document frequency in
# terms whose `text_df` a generation keeps, then forgotten all at once: an asked term no unit holds has its
# ~250 one-edit spellings looked up (protocol/variants.py), so a long-lived worker's novel questions would
# otherwise grow it without end (~100 bytes an entry)
TEXT_DF_KEPT = 65_536
MAX_CACHED_UNITS = 4096  # units a warm worker keeps decoded between retrievals (KBStore.fetch)

_encode = msgspec.msgpack.Encoder().encode
_decode_unit = msgspec.msgpack.Decoder(KnowledgeUnit).decode


class StoredUnit(NamedTuple):
    """A unit as read back from the store: its integer key, the full KU and its content terms."""

    key: int
    unit: KnowledgeUnit
    terms: frozenset[str]


class NewUnit(NamedTuple):
    """A unit about to be written (passed to upsert hooks): `fields` its analysed terms per DS009 field
    (as `unit_fields` gives them), `texts` each text field's terms joined by single spaces."""

    key: int
    unit: KnowledgeUnit
    hash: str
    fields: Mapping[str, list[str]]
    texts: Mapping[str, str] = {}


class OldUnit(NamedTuple):
    key: int
    id: str
    hash: str


# A hook runs inside the write transaction: (sqlite connection, removed units, added units).
WriteHook = Callable[[sqlite3.Connection, list[OldUnit], list[NewUnit]], None]


class KBStore:
    """Open (creating if needed) the store in `root`. Cheap to query; reload with `refresh()`."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._gen_file = str(self.root / GENERATION_FILE)  # read on every call (`read_generation`)
        self.db = sqlite3.connect(self.root / UNITS_FILE, timeout=30.0, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        # a source's whole write is one transaction: with SQLite's default 2 MiB page cache a large one
        # spills dirty pages to the WAL mid-transaction and reads its own B-tree pages back through the OS;
        # a ceiling of WRITE_CACHE_KIB keeps it in memory (pages are allocated only as they are used)
        self.db.execute(f"PRAGMA cache_size=-{WRITE_CACHE_KIB}")
        self._init_db()
        self.text = TextIndex(self.root / "index")
        self.generation = -1
        self._tag_idf: dict[tuple[str, str], float] = {}
        self._idf: dict[str, float] = {}  # content terms' idf in this generation (two index reads each)
        self._sources: list[tuple[str, str, int]] | None = None  # this generation's sources table
        # a term's document frequency in topic, heading or body (the largest of the three), in this generation:
        # a retrieve asks it for every query term and each spelling variant it tries (three index reads each)
        self._text_df: dict[str, int] = {}
        # Units read back in this generation, by key and by KU id: a warm worker's retrievals keep
        # reading the same few hundred rows (a row decode is ~15% of a retrieve); a change clears them.
        self._by_key: dict[int, StoredUnit] = {}
        self._by_id: dict[str, StoredUnit] = {}
        self.refresh(force=True)

    # ------------------------------------------------------------------ setup and reload

    def _init_db(self) -> None:
        self.db.executescript(
            """
            CREATE TABLE IF NOT EXISTS units(
                key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, hash TEXT NOT NULL,
                level TEXT NOT NULL, role TEXT NOT NULL, acts TEXT NOT NULL, terms TEXT NOT NULL,
                record BLOB NOT NULL);
            CREATE INDEX IF NOT EXISTS units_source ON units(source);
            CREATE INDEX IF NOT EXISTS units_level ON units(level);
            CREATE TABLE IF NOT EXISTS sources(
                id TEXT PRIMARY KEY, name TEXT, units INTEGER NOT NULL, summary TEXT, updatedAt REAL);
            CREATE TABLE IF NOT EXISTS tagdf(field TEXT, term TEXT, df INTEGER NOT NULL, PRIMARY KEY(field, term));
            CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT);
            """
        )
        row = self.db.execute("SELECT value FROM meta WHERE name='format'").fetchone()
        if row is None:
            self.db.execute("INSERT OR IGNORE INTO meta VALUES('format', ?)", (FORMAT_VERSION,))
        elif row[0] != FORMAT_VERSION:
            raise ArtifactError(
                f"artifact format {row[0]} in {self.root}; this plugin reads format {FORMAT_VERSION}: the "
                f"kernel rebuilds the index when it opens if the plugin's manifest declares indexFormat "
                f"kb_common-{FORMAT_VERSION} (any mrpvm command, e.g. `mrpvm kb check NAME`)"
            )

    def read_generation(self) -> int:
        """The store's generation (0 when no write made one yet); read on every call."""
        return read_generation(self._gen_file)

    def refresh(self, force: bool = False) -> bool:
        """Reload the searcher and statistics if another process (or we) committed a change."""
        gen = self.read_generation()
        if gen == self.generation and not force:
            return False
        self.text.reload()
        self._tag_df = {(f, t): df for f, t, df in self.db.execute("SELECT field, term, df FROM tagdf")}
        self._tag_idf = {}
        self._idf = {}
        self._sources = None
        self._text_df = {}
        self._by_key.clear()
        self._by_id.clear()
        self.generation = gen
        return True

    # ------------------------------------------------------------------ writing

    def upsert(
        self,
        source_id: str,
        source_name: str,
        units: list[KnowledgeUnit],
        hook: WriteHook | None = None,
        summary: dict | None = None,
        analysis: list[UnitAnalysis] | None = None,
    ) -> tuple[int, int]:
        """Replace every unit of `source_id` with `units`. Returns (removed, added). `analysis`: each
        unit's hash and field terms as the kernel handed them (protocol/handoff.py), else computed here."""
        with paused_gc():
            if analysis is not None:
                prepared = [written_form(u, a) for u, a in zip(units, analysis, strict=True)]
            else:
                prepared = [written_form(u, None) for u in units]
        return self._write(source_id, source_name, prepared, hook, summary)

    def remove(self, source_id: str, hook: WriteHook | None = None) -> int:
        """Delete every unit of `source_id`. Returns how many were removed."""
        removed, _ = self._write(source_id, "", None, hook)
        return removed

    def _write(
        self, source_id: str, source_name: str, prepared, hook: WriteHook | None, summary: dict | None = None
    ) -> tuple[int, int]:
        if not source_id:
            raise ValueError("sourceId is required")
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            old = [
                OldUnit(k, i, h)
                for k, i, h in db.execute("SELECT key, id, hash FROM units WHERE source=?", (source_id,))
            ]
            old_tags = counted_stored_tags(
                db.execute("SELECT role, acts FROM units WHERE source=?", (source_id,))
            )
            new: list[NewUnit] = []
            content: list[str] = []
            if prepared:
                row = db.execute("SELECT value FROM meta WHERE name='next_key'").fetchone()
                next_key = int(row[0]) if row else 1
                for offset, (unit, h, fields, texts, terms) in enumerate(prepared):
                    new.append(NewUnit(next_key + offset, unit, h, fields, texts))
                    content.append(terms)
                db.execute(
                    "INSERT OR REPLACE INTO meta VALUES('next_key', ?)", (str(next_key + len(prepared)),)
                )
            self.text.replace_source(source_id, ((n.key, n.texts) for n in new))
            db.execute("DELETE FROM units WHERE source=?", (source_id,))
            if new:
                # OR REPLACE: a unit id moving from another source replaces that copy (its index entry is orphaned)
                db.executemany(
                    "INSERT OR REPLACE INTO units(key, id, source, hash, level, role, acts, terms, record)"
                    " VALUES(?,?,?,?,?,?,?,?,?)",
                    (
                        (
                            n.key,
                            n.unit.id,
                            source_id,
                            n.hash,
                            n.unit.kuType,
                            n.unit.role,
                            ",".join(n.unit.acts),
                            terms,
                            _encode(n.unit),
                        )
                        for n, terms in zip(new, content, strict=True)
                    ),
                )
                db.execute(
                    "INSERT OR REPLACE INTO sources VALUES(?,?,?,?,?)",
                    (
                        source_id,
                        source_name,
                        len(new),
                        msgspec.json.encode(summary or {}).decode(),
                        time.time(),
                    ),
                )
            else:
                db.execute("DELETE FROM sources WHERE id=?", (source_id,))
            self._update_tags(old_tags, counted_tags(n.unit for n in new))
            if hook is not None:
                hook(db, old, new)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        bump_generation(self._gen_file)
        self.refresh()
        return len(old), len(new)

    def _update_tags(self, removed: list[CountedTags], added: list[CountedTags]) -> None:
        self.db.executemany(
            "INSERT INTO tagdf VALUES(?,?,?) ON CONFLICT(field, term) DO UPDATE SET df = df + excluded.df",
            ((f, t, d) for (f, t), d in tag_delta(removed, added).items()),
        )

    # ------------------------------------------------------------------ reading

    @property
    def size(self) -> int:
        return self.text.num_docs

    def search(self, weights: dict[str, float], limit: int) -> list[tuple[int, float]]:
        """(key, score) of the best `limit` units by weighted BM25 over the text fields."""
        return self.text.search(weights, limit)

    def _rows(self, sql: str, args: list[Any]) -> list[StoredUnit]:
        out = []
        for start in range(0, len(args), 500):
            chunk = args[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, terms, record in self.db.execute(sql.format(marks), chunk):
                out.append(StoredUnit(key, _decode_unit(record), frozenset(terms.split())))
        return out

    def _remember(self, rows: list[StoredUnit]) -> None:
        """Keep `rows` for this generation; when they do not fit, start over (at most MAX_CACHED_UNITS)."""
        if len(self._by_key) + len(rows) > MAX_CACHED_UNITS:
            self._by_key.clear()
            self._by_id.clear()
            rows = rows[:MAX_CACHED_UNITS]
        for row in rows:
            self._by_key[row.key] = row
            self._by_id[row.unit.id] = row

    def fetch(self, keys: Iterable[int]) -> dict[int, StoredUnit]:
        """Full units by key (keys whose record is gone are absent)."""
        return self._fetch(self._by_key, keys, "key", lambda row: row.key)

    def fetch_ids(self, ids: Iterable[str]) -> dict[str, StoredUnit]:
        """Full units by KU id (used to walk parent/child links)."""
        return self._fetch(self._by_id, ids, "id", lambda row: row.unit.id)

    def _fetch(
        self, cached: dict[K, StoredUnit], wanted: Iterable[K], column: str, key_of: Callable[[StoredUnit], K]
    ) -> dict[K, StoredUnit]:
        """Rows from the generation's decoded rows, the rest read (and remembered) in one query."""
        out: dict[K, StoredUnit] = {}
        missing: list[K] = []
        for ident in dict.fromkeys(wanted):
            row = cached.get(ident)
            if row is None:
                missing.append(ident)
            else:
                out[ident] = row
        if missing:
            rows = self._rows(f"SELECT key, terms, record FROM units WHERE {column} IN ({{}})", missing)
            self._remember(rows)
            out.update((key_of(row), row) for row in rows)
        return out

    def doc_freq(self, field: str, term: str) -> int:
        return self.text.doc_freq(field, term)

    def text_df(self, term: str) -> int:
        """How many units hold the term in their topic, heading or body: the largest of the three fields'
        document frequencies (kept for the generation)."""
        kept = self._text_df
        count = kept.get(term)
        if count is None:
            if len(kept) >= TEXT_DF_KEPT:
                kept.clear()
            count = kept[term] = max(self.doc_freq(f, term) for f in _DF_FIELDS)
        return count

    def holds(self, term: str) -> bool:
        """Whether some unit has the term in its topic, heading or body (kept for the generation)."""
        return self.text_df(term) > 0

    def aggregates(self, limit: int) -> list[StoredUnit]:
        """Source summaries (aggregate units), most recently written first."""
        return [
            StoredUnit(k, _decode_unit(r), frozenset(t.split()))
            for k, t, r in self.db.execute(
                "SELECT key, terms, record FROM units WHERE level='aggregate' ORDER BY key DESC LIMIT ?",
                (limit,),
            )
        ]

    def idf(self, term: str) -> float:
        """Inverse document frequency of a content term (the larger of its topic and body frequencies)."""
        cached = self._idf.get(term)
        if cached is None:
            text = self.text
            df = max(text.doc_freq("topic", term), text.doc_freq("body", term))
            cached = self._idf[term] = idf(text.num_docs, df)
        return cached

    def tag_idf(self, field: str, term: str) -> float:
        cached = self._tag_idf.get((field, term))
        if cached is None:
            cached = idf(max(1, self.text.num_docs), self._tag_df.get((field, term), 0))
            self._tag_idf[(field, term)] = cached
        return cached

    def sources(self) -> list[tuple[str, str, int]]:
        """(id, name, units) of every source, read once per generation (a retrieve reads their titles)."""
        if self._sources is None:
            self._sources = [
                tuple(r) for r in self.db.execute("SELECT id, name, units FROM sources ORDER BY id")
            ]
        return list(self._sources)

    def close(self) -> None:
        self.db.close()


def open_store(state: dict[str, Any], root: Path | None, create: bool = True) -> KBStore | None:
    """The store of this artifact folder, kept open in `state` (Call.state) and refreshed on change.

    With `create=False` a folder that holds no store yet gives None (a retrieve must not create one).
    """
    if root is None:
        return None
    stores: dict[str, KBStore] = state.setdefault(STATE_KEY, {})
    key = str(root)
    store = stores.get(key)
    if store is None:
        if not create and not store_exists(root):
            return None
        store = KBStore(root)
        stores[key] = store
    else:
        store.refresh()
    return store
