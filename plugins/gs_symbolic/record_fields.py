"""A field of the record the question names answers it (issue 20: right passage, asked detail missing).

Documentation kept as data (an Ansible module's `options:`, an OpenAPI schema's properties, a chart's
values) describes each key by a record: its prose, then short fields, each `name: value` on its line
(`type: int`, `default: 300`, `version_added: "2.3"`; sd-symbolic's YAML entries keep them so, apart from the
prose). "What is the default value of timeout?" asks a field (`default`) of one record (`timeout`): the
record's own field states it, as a table's cell at row and column does. Read as sentences, the ranking
prefers a prose sentence that writes "timeout" and "default" ("… O(timeout), this is the default if nothing
is specified") over the bare field, whose "timeout" is only the entry it stands under.

So when the question writes the key of exactly one record of the evidence as a word of its own, and before
it (where a wh-question asks) every term of a field's name ("version_added": version, added), that field of
that record is the answer, labelled by its key. The question's other words must be the record's own (what
its text or headings write) or the documents' subject (common_terms: "… of timeout for heron_mirror?" over
heron_mirror.py), so a question that asks more than the field ("… the ability to resume a copy over a
slow link …") is left to the sentence ranking. A record without the asked field
is refused only when its prose never writes the field's name either (field_unstated): "Defaults to the
source's region." would state it.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import TYPE_ONLY_NOUNS
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import prose_value, terms
from mrpvm.protocol.document import KnowledgeUnit

from .context_terms import common_terms
from .documented import KIND_NOUNS, WORD
from .evidence import Sentence
from .material import Outcome
from .question import Question
from .render import labelled

# `name: value` on a line of its own (the key an identifier, no blanks; the value no longer than a line)
_FIELD = lazy_pattern(r"^([A-Za-z_][\w.-]*):[ \t]+(\S.*)$")
# the nouns a question names a record's kind by ("the msg option", "which parameter"): not words of it
_RECORD_NOUNS = frozenset(terms(" ".join(KIND_NOUNS)))
_KIND_ONLY = frozenset(terms(" ".join(sorted(TYPE_ONLY_NOUNS))))  # "the default value of …": no word of it


def record_fields(unit: KnowledgeUnit) -> list[tuple[str, str]]:
    """(name, line) of a definition's fields: the lines of its paragraphs made of `name: value` lines only
    (sd-symbolic writes a YAML entry's fields so, after its prose); [] for any other unit."""
    if unit.chunkType != "definition" or not unit.title or not unit.claim:
        return []
    out: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", unit.claim):
        lines = [ln.strip() for ln in paragraph.split("\n") if ln.strip()]
        matched = [_FIELD.match(ln) for ln in lines]
        if lines and all(m and not prose_value(m.group(2)) for m in matched):
            out += [(m.group(1), m.group(0)) for m in matched if m]
    return out


def fields_only(sentences: list[Sentence]) -> bool:
    """The passage is nothing but the fields of a record that has prose ("returned: success type: str"): what
    the record says of itself is its prose; its fields answer a question that asks one of them (field_answer), or follow the
    prose they are quoted with ("… copied in the order listed. type: list default: [ … ]")."""
    return all(
        _has_prose(s.unit) and any(s.text.startswith(line) for _, line in record_fields(s.unit))
        for s in sentences
    )


def _has_prose(unit: KnowledgeUnit) -> bool:
    """A record that says what it is in prose besides its fields; one made of fields only (a schema that
    lists `type: object` and `required: a, b`) says everything in them, so they answer for it."""
    paragraphs = [p for p in re.split(r"\n\s*\n", unit.claim or "") if p.strip()]
    return len(paragraphs) > sum(
        all(
            (m := _FIELD.match(ln.strip())) and not prose_value(m.group(2))
            for ln in p.split("\n")
            if ln.strip()
        )
        for p in paragraphs
    )


def _named_record(question: str, records: list[KnowledgeUnit]) -> tuple[KnowledgeUnit, str] | None:
    """The one record whose key the question writes as a word of its own (in its case), with the words the
    question writes before it (where a wh-question puts what it asks: "What is the default value of
    timeout", "Which version added retry_limit"); None (no key, or several different keys)."""
    words = [(m.group(0), m.start()) for m in WORD.finditer(question)]
    firsts: dict[str, int] = {}
    for word, at in words:
        firsts.setdefault(word, at)
    named = {u.title: u for u in records if u.title and u.title in firsts}
    if len(named) != 1:
        return None
    key, unit = next(iter(named.items()))
    return unit, question[: firsts[key]]


def _asked_field(q: Question, pool: list[Sentence]) -> tuple[KnowledgeUnit, str, str | None] | None:
    """(the record the question names, the field it asks, that field's line or None when the record lacks
    it): the fields the question may ask are those the evidence's records carry (their schema); None when the
    question names no single record, asks no field, or asks more than the field."""
    units = list({s.unit.id: s.unit for s in pool}.values())
    records = [u for u in units if record_fields(u)]
    found = _named_record(q.focus or q.text, records)
    if found is None or found[0].title is None:
        return None
    record, before = found
    asked, leading = set(q.terms), set(terms(before))
    schema = {name: frozenset(terms(name)) for r in records for name, _ in record_fields(r)}
    # the field is what the question asks: its name among the words before the key ("What does the
    # elapsed return value contain?" asks what `elapsed` holds, not its `returned:` field)
    fields = [(named, name) for name, named in schema.items() if named and named <= asked & leading]
    if not fields:
        return None
    wanted, name = max(fields, key=lambda f: (len(f[0]), f[1]))
    own = set(terms(" ".join([record.title, record.claim or "", record.sectionTitle or ""])))
    rest = asked - wanted - set(terms(record.title)) - _KIND_ONLY - _RECORD_NOUNS
    if not rest <= own | common_terms(q.terms, pool):
        return None  # the question asks more than the field: the sentence ranking reads it
    return record, name, dict(record_fields(record)).get(name)


def field_answer(q: Question, pool: list[Sentence]) -> Outcome | None:
    """The asked field of the record the question names, as the answer (see the module docstring); None
    when the question names no single record, asks no field of it, or asks more than the field."""
    asked = _asked_field(q, pool)
    if asked is None or asked[2] is None:
        return None
    record, name, line = asked
    return Outcome(
        labelled(record.title or "", line),
        [record.id],
        "high",
        f"the field '{name}' of the record '{record.title}'",
    )


def field_unstated(q: Question, pool: list[Sentence]) -> str:
    """Why the record the question names does not state the field it asks ("What is the default port …?"
    over `port`, whose record lists `type: int` and no `default:`, while other records carry one): its
    fields lack it and its prose never writes the field's name ("Defaults to …" would); "" otherwise."""
    asked = _asked_field(q, pool)
    if asked is None or asked[2] is not None:
        return ""
    record, name, _ = asked
    if set(terms(name)) <= set(terms(record.claim or "")):
        return ""
    return f"the record '{record.title}' lists no '{name}'"
