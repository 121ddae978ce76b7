"""Ingest once: a source's units handed to a kb-plugin as one read-only file, with their analysis.

A kb-plugin whose manifest says `"handoff": "file"` gets `onSourceText` with `payload.unitsFile`, the path
of a MessagePack document (`UnitsHandoff`) instead of the text and units inline (protocol/SPEC.md §7,
"Units handoff"). The kernel encodes the document once per source and analyses every unit once
(`analyse_unit`: the DS009 fields' terms, as `protocol.analysis.terms` spells them), so the kb-plugins do
not each decode a multi-megabyte JSON request and repeat the same analysis. A plugin may ignore
`analysis` (or find an `analyser` it does not know) and analyse the units itself.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Literal

import msgspec

from .analysis import plain_text, terms, text_terms
from .cnl_compact import ShippedAnalysis
from .digests import blake2b
from .document import KnowledgeUnit
from .gc_pause import paused_gc

HANDOFF_FORMAT = "mrpvm-units"
HANDOFF_VERSION = 1
# Names what `analyse_unit` computes: bump it with any change to its fields or to `analysis.terms`.
ANALYSER = "mrpvm-terms-7"
# The MIME-like name SPEC.md uses for the file, and the suffix the kernel gives it.
HANDOFF_SUFFIX = ".units.msgpack"
_WORDS = re.compile(r"\w+")  # the words of a text, its layout (spaces, rules, pipes) aside


class UnitAnalysis(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One unit's analysis: its content hash and the analysed terms of each weighted DS009 field, each
    field's terms joined by single spaces (a term never holds whitespace; one string decodes far faster
    than a list of short ones). An absent field has no terms."""

    hash: str
    topic: str = ""
    heading: str = ""
    body: str = ""
    role: str = ""
    acts: str = ""
    note: str = ""
    condition: str = ""

    def fields(self) -> dict[str, list[str]]:
        """Terms per field, as `unit_fields` gives them."""
        return {
            "topic": self.topic.split(" ") if self.topic else [],
            "heading": self.heading.split(" ") if self.heading else [],
            "body": self.body.split(" ") if self.body else [],
            "role": self.role.split(" ") if self.role else [],
            "acts": self.acts.split(" ") if self.acts else [],
            "note": self.note.split(" ") if self.note else [],
            "condition": self.condition.split(" ") if self.condition else [],
        }


class UnitsHandoff(msgspec.Struct, kw_only=True):
    """The handoff file: one source's raw text and units (the tree sd produced), and optionally the
    kernel's analysis of each unit (`analysis[i]` is `units[i]`'s, when `analyser` is set)."""

    format: Literal["mrpvm-units"] = "mrpvm-units"  # HANDOFF_FORMAT
    version: int = HANDOFF_VERSION
    sourceId: str
    sourceName: str = ""
    text: str = ""
    units: list[KnowledgeUnit] = []
    analyser: str = ""
    analysis: list[UnitAnalysis] = []


class HandoffError(ValueError):
    """The handoff file is missing, unreadable or not a valid `UnitsHandoff` (said in the message)."""


# --------------------------------------------------------------------------- a unit's fields (DS009)

_ITEMIZED = frozenset({"list", "table"})


def body_text(unit: KnowledgeUnit) -> str:
    """The unit's statement, with its TextBody when that adds words the claim does not carry. A TextBody
    that is the claim as laid out in the source (a table's padded cells and rule row, a wrapped paragraph)
    adds none: counted twice, every word would weigh double and the unit read twice as long (BM25)."""
    body = unit.body
    extra = unit.textBody or ""
    if not extra or extra.strip() == body.strip():
        return body
    if body and body in extra:
        return extra
    return body if _adds_no_words(extra, body) else f"{body}\n{extra}"


def _adds_no_words(extra: str, body: str) -> bool:
    """Every word of `extra` is a word of `body`, as often (a list's bullets renumbered "1.", "2." in the
    claim, a table's rule row and padding: the same statement)."""
    return not Counter(_WORDS.findall(extra.lower())) - Counter(_WORDS.findall(body.lower()))


def topic_text(unit: KnowledgeUnit) -> str:
    """The topic field: Topic, plus Title when it adds words; for a list or table, also the heading it
    stands under (a list under "Exit Codes" is found by "exit code" although no item says it)."""
    parts = [unit.topic]
    for extra in (unit.title, unit.heading if unit.chunkType in _ITEMIZED else None):
        if extra and not any(extra in p for p in parts):
            parts.append(extra)
    return " ".join(parts)


@lru_cache(maxsize=64)
def role_terms(role: str) -> tuple[str, ...]:
    return tuple(terms(role))


@lru_cache(maxsize=256)  # every atomic unit of a section stands under the same heading
def heading_terms(heading: str) -> tuple[str, ...]:
    return tuple(terms(heading)) if heading else ()


@lru_cache(maxsize=1024)
def acts_terms(acts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(terms(" ".join(acts)))


def unit_fields(unit: KnowledgeUnit) -> dict[str, list[str]]:
    """Analysed terms of each weighted field (stemmed content words, as `analysis.terms`)."""
    body = body_text(unit)
    return {
        "topic": terms(plain_text(topic_text(unit))),
        # every atomic unit is also found by the heading it stands under (a section's own heading is its
        # topic already)
        "heading": list(heading_terms(unit.heading)) if unit.kuType == "atomic" else [],
        "body": text_terms(body),
        "role": list(role_terms(unit.role)),
        "acts": list(acts_terms(tuple(unit.acts))),
        "note": terms(unit.utilityNote) if unit.utilityNote else [],
        "condition": terms(unit.condition) if unit.condition else [],
    }


_hash_encoder = msgspec.json.Encoder(order="deterministic")


def unit_hash(unit: KnowledgeUnit) -> str:
    """A content hash: the unit's own Hash when present, else a digest of its fields (score excluded)."""
    if unit.hash:
        return unit.hash
    clean = msgspec.structs.replace(unit, score=None, resolvedFor=[])
    return blake2b(_hash_encoder.encode(clean), digest_size=12).hexdigest()


def analyse_unit(unit: KnowledgeUnit) -> UnitAnalysis:
    return UnitAnalysis(hash=unit_hash(unit), **{k: " ".join(v) for k, v in unit_fields(unit).items()})


_encode_analysis = msgspec.msgpack.Encoder().encode
_decode_analysis = msgspec.msgpack.Decoder(list[UnitAnalysis]).decode


def ship_analysis(analysis: list[UnitAnalysis]) -> ShippedAnalysis:
    """An sd-plugin's analysis of its reply's units, as its compact reply carries it."""
    return ShippedAnalysis(ANALYSER, msgspec.Raw(_encode_analysis(analysis)))


def analyse_units(units: list[KnowledgeUnit], shipped: ShippedAnalysis | None = None) -> list[UnitAnalysis]:
    """Every unit's analysis: the one an sd-plugin shipped for it (`shipped`, by position) when that is by
    this analyser and carries the unit's hash (the kernel changed no analysed field of it), else analysed
    here."""
    given: list[UnitAnalysis | None] = [None] * len(units)
    if shipped is not None and shipped.analyser == ANALYSER:
        try:
            decoded = _decode_analysis(shipped.analysis)
        except (msgspec.DecodeError, msgspec.ValidationError):
            decoded = []
        if len(decoded) == len(units):
            given = list(decoded)
    return [
        a if a is not None and a.hash == unit_hash(u) else analyse_unit(u)
        for u, a in zip(units, given, strict=True)
    ]


# --------------------------------------------------------------------------- the file


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(UnitsHandoff).decode


def encode_handoff(
    source_id: str,
    source_name: str,
    text: str,
    units: list[KnowledgeUnit],
    *,
    analysed: bool = True,
    shipped: ShippedAnalysis | None = None,
) -> bytes:
    """The handoff document of one source, its units analysed once (`analysed`): here, or by the sd-plugin
    (`shipped`, see `analyse_units`)."""
    doc = UnitsHandoff(sourceId=source_id, sourceName=source_name, text=text, units=units)
    with paused_gc():
        if analysed:
            doc.analyser = ANALYSER
            doc.analysis = analyse_units(units, shipped)
        return _encode(doc)


def decode_handoff(data: bytes, source_id: str = "") -> UnitsHandoff:
    """The document in `data`; HandoffError when it is not one (or is another source's)."""
    try:
        with paused_gc():
            doc = _decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        raise HandoffError(f"not a {HANDOFF_FORMAT} document: {err}") from None
    if doc.version != HANDOFF_VERSION:
        raise HandoffError(f"{HANDOFF_FORMAT} version {doc.version}; this side reads {HANDOFF_VERSION}")
    if source_id and doc.sourceId != source_id:
        raise HandoffError(f"the file holds source {doc.sourceId!r}, the request names {source_id!r}")
    if doc.analyser and len(doc.analysis) != len(doc.units):
        raise HandoffError(f"{len(doc.analysis)} analyses for {len(doc.units)} units")
    return doc


def read_handoff(path: str, source_id: str = "") -> UnitsHandoff:
    """Read and decode the file at `path` (HandoffError when missing, unreadable or invalid)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise HandoffError(f"cannot read the units file {path}: {err.strerror or err}") from None
    return decode_handoff(data, source_id)
