"""A labelled line of a code block answers a question that names its label (issue 20: false refusals).

Records kept as text are often quoted as a block: a package's control or copyright header (`Maintainer: …`,
`Upstream-Contact: …`), a mail header, an INI section, a manifest. sd-symbolic reads such a block as code,
and a code block is no prose the sentence ranking reads unless the question asks for code or a heading
names it (narrowing.code_under_named_heading). "Who is the upstream contact for less?" over

    Source: http://www.example.org/less/
    Upstream-Contact: Mark Nudelman <markn@example.org>

is then refused with the answer in hand. A field is the answer when the question names it: every word of
the label is a word of the question ("upstream contact"), the value has the shape the question asks for (a
name for "who", a version for "which version"), and the question's other words are the block's own or the
documents' subject (common_terms), as record_fields.py asks of a YAML record. Of several labels the one the
question names most fully is read; a tie between different values reads none. It is read only when no
passage answers (solver.answer), so a prose answer is never displaced.

A block may be a table of codes instead: a manual's indented list of state letters or exit codes, one row a
short key, two or more blanks, then what it means ("D    uninterruptible sleep (usually IO)"), under a lead-in
or heading that names what the keys are ("the values the stat output specifier will display"). A question
that writes one row's key as written (case and all: "a D in the STAT column") asks that row, when the
block's unit (lead-in, heading) states another of its words; the row is the answer, `success` only when the
unit states all of the question's other words (or they are the documents' subject), else the best candidate.
"""

from __future__ import annotations

from mrpvm.plugins.sdk.answer_shapes import mentions_type
from mrpvm.plugins.sdk.answer_types import TYPE_ONLY_NOUNS
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, terms

from .context_terms import common_terms
from .evidence import Sentence
from .material import Outcome
from .question import Question

# `Label: value` at the start of a line (the label a word or hyphenated words, no blanks; a value after it)
_LABELLED = lazy_pattern(r"^\s*([A-Za-z][\w.-]*):[ \t]+(\S.*?)\s*$")
# a table's row: a short key (no blanks), two or more blanks, its description
_ROW = lazy_pattern(r"^\s*(\S{1,8})[ \t]{2,}(\S.*?)\s*$")
_TOKEN = lazy_pattern(r"(?<![\w-])[\w<>+]{1,8}(?![\w-])")
MIN_ROWS = 3  # a table has this many rows at least
ROW_SHARE = 2 / 3  # ... and they are this share of its lines
_KIND_ONLY = frozenset(terms(" ".join(sorted(TYPE_ONLY_NOUNS))))  # "Version:", "Name:": no field by itself
_FRAMES = frozenset(terms("mean stand"))  # "what does D mean", "what does D stand for": what a key is asked


def _label_terms(label: str) -> frozenset[str]:
    """The words of a label, a compound read by its parts ("Upstream-Contact": upstream, contact)."""
    return frozenset(t for t in terms(label.replace("_", " ")) if "-" not in t)


def _named(label: frozenset[str], asked: set[str]) -> bool:
    """Every word of the label is a word of the question, and the label is more than a kind noun."""
    return bool(label) and not label <= _KIND_ONLY and label <= asked


def names_label(asked: set[str], text: str) -> bool:
    """The text is a `Label: value` statement whose label the question names (a stanza file's field,
    sd-symbolic's stanzas.py: "Upstream-Contact: …" for "Who is the upstream contact …?")."""
    m = _LABELLED.match(text)
    return m is not None and _named(_label_terms(m.group(1)), asked)


def code_field(q: Question, code: list[Sentence], pool: list[Sentence]) -> Outcome | None:
    """The labelled line of a code block the question names (see the module docstring), or None."""
    asked = set(q.terms)
    if not asked or q.answer_type in ("yes-no", "procedure", "command", "reason", "comparison"):
        return None
    common = common_terms(q.terms, pool)
    found: list[tuple[int, str, Sentence]] = []
    for block in code:
        said = set(block.terms) | set(terms(block.text))
        for line in block.text.split("\n"):
            m = _LABELLED.match(line)
            if m is None:
                continue
            label = _label_terms(m.group(1))
            if not _named(label, asked):
                continue
            if q.answer_type and not mentions_type(m.group(2), q.answer_type):
                continue  # "who": a name; "which version": a version
            if not asked - label <= said | common:
                continue  # the question asks about more than this block says
            found.append((len(label), line.strip(), block))
    if not found:
        return _table_row(q, code, common)
    best = max(n for n, _, _ in found)
    lines = {line for n, line, _ in found if n == best}
    if len(lines) != 1:
        return None  # two blocks' fields named alike, with different values: which one is asked is not said
    line = next(iter(lines))
    block = next(b for n, li, b in found if li == line)
    return Outcome(line, [block.unit.id], "medium", f"the labelled line '{line.split(':', 1)[0]}' of a block")


def table_rows(block: Sentence) -> list[tuple[str, str]]:
    """(key, line) of the rows of a block that is a table (MIN_ROWS rows making ROW_SHARE of its lines)."""
    lines = [ln for ln in block.text.split("\n") if ln.strip()]
    rows = [(m.group(1), ln.strip()) for ln in lines if (m := _ROW.match(ln)) is not None]
    return rows if len(rows) >= MIN_ROWS and len(rows) >= ROW_SHARE * len(lines) else []


def _table_row(q: Question, code: list[Sentence], common: set[str]) -> Outcome | None:
    """The row of a table of codes whose key the question writes as written (see the module docstring)."""
    written = {m.group(0) for m in _TOKEN.finditer(q.focus or q.text)}
    found: list[tuple[str, str, Sentence]] = []
    for block in code:
        for key, line in table_rows(block):
            if key in written and key.lower() not in STOPWORDS:
                found.append((key, line, block))
    if len({line for _, line, _ in found}) != 1:
        return None  # no row, or rows of several keys or tables: which is asked is not told
    key, line, block = found[0]
    unit = block.unit
    context = set(terms(" ".join([unit.claim or "", unit.heading or "", unit.sectionTitle or ""])))
    rest = set(q.terms) - set(terms(key)) - _FRAMES
    if not rest & context:
        return None  # the table is not about what the question asks of the key
    supported = rest <= context | common
    evidence = f"the row '{key}' of a table" + (
        "" if supported else "; the table's context is silent on some of the question"
    )
    return Outcome(line, [unit.id], "medium" if supported else "low", evidence, supported=supported)
