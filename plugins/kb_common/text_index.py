"""A kb plugin's full-text index: tantivy over the pre-analysed text fields of its units (kb_common/store.py
keeps the unit records beside it in SQLite and decides when the index is written and reloaded).

tantivy is imported when an index is opened: a worker answering from session units only (a one-question
`mrpvm ask --source FILE` on a KB with no sources) never loads it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .fields import FIELD_WEIGHTS, TEXT_FIELDS

if TYPE_CHECKING:
    from pathlib import Path

    import tantivy

WRITER_HEAP = 64_000_000


class ArtifactError(RuntimeError):
    """The artifact folder cannot be used (corrupt index, incompatible format, lock never released)."""


def _schema() -> tantivy.Schema:
    import tantivy

    sb = tantivy.SchemaBuilder()
    for name in TEXT_FIELDS:
        sb.add_text_field(name, tokenizer_name="whitespace", index_option="freq")
    sb.add_text_field("source", tokenizer_name="raw", index_option="basic")
    sb.add_unsigned_field("key", fast=True, indexed=False, stored=False)
    return sb.build()


class TextIndex:
    """The index in `index_dir` (created if absent): one document per unit, keyed by the unit's store key
    and tagged with its source, so a source's documents are replaced in one commit."""

    def __init__(self, index_dir: Path):
        import tantivy

        self.schema = _schema()
        try:
            if index_dir.is_dir() and tantivy.Index.exists(str(index_dir)):
                self.index = tantivy.Index.open(str(index_dir))
            else:
                index_dir.mkdir(exist_ok=True)
                self.index = tantivy.Index(self.schema, path=str(index_dir))
        except ValueError as err:
            raise ArtifactError(f"cannot open the index in {index_dir}: {err}") from None
        self.searcher: Any = None

    def reload(self) -> None:
        """See what was committed since (by this or another process)."""
        self.index.reload()
        self.searcher = self.index.searcher()

    @property
    def num_docs(self) -> int:
        return int(self.searcher.num_docs)

    def doc_freq(self, field: str, term: str) -> int:
        return int(self.searcher.doc_freq(field, term))

    def replace_source(self, source_id: str, documents: Iterable[tuple[int, dict[str, str]]]) -> None:
        """Replace every document of `source_id` with `documents` ((key, {text field: its terms joined by
        single spaces}) each; an absent or empty field has none), committed."""
        import tantivy

        writer = self._writer()
        try:
            writer.delete_documents_by_term("source", source_id)
            for key, texts in documents:
                doc = tantivy.Document()
                for name in TEXT_FIELDS:
                    found = texts.get(name)
                    if found:
                        doc.add_text(name, found)
                doc.add_text("source", source_id)
                doc.add_unsigned("key", key)
                writer.add_document(doc)
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()

    def _writer(self) -> Any:
        deadline = time.monotonic() + 30.0
        while True:
            try:
                return self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
            except ValueError as err:  # LockBusy: another process is writing
                if time.monotonic() > deadline:
                    raise ArtifactError(f"index writer lock not released: {err}") from None
                time.sleep(0.05)

    def search(self, weights: dict[str, float], limit: int) -> list[tuple[int, float]]:
        """(key, score) of the best `limit` units by weighted BM25 over the text fields."""
        if not weights or self.searcher.num_docs == 0:
            return []
        import tantivy

        clauses = []
        for term, w in weights.items():
            for name in TEXT_FIELDS:
                query = tantivy.Query.term_query(self.schema, name, term)
                clauses.append(
                    (tantivy.Occur.Should, tantivy.Query.boost_query(query, FIELD_WEIGHTS[name] * w))
                )
        result = self.searcher.search(tantivy.Query.boolean_query(clauses), limit, count=False)
        hits = result.hits
        if not hits:
            return []
        keys = self.searcher.fast_field_values("key", [addr for _, addr in hits])
        return [(int(k), float(score)) for (score, _), k in zip(hits, keys, strict=True) if k is not None]
