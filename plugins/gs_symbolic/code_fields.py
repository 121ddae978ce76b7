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
"""

from __future__ import annotations

from mrpvm.plugins.sdk.answer_types import TYPE_ONLY_NOUNS, mentions_type
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .context_terms import common_terms
from .evidence import Sentence
from .material import Outcome
from .question import Question

# `Label: value` at the start of a line (the label a word or hyphenated words, no blanks; a value after it)
_LABELLED = lazy_pattern(r"^\s*([A-Za-z][\w.-]*):[ \t]+(\S.*?)\s*$")
_KIND_ONLY = frozenset(terms(" ".join(sorted(TYPE_ONLY_NOUNS))))  # "Version:", "Name:": no field by itself


def _label_terms(label: str) -> frozenset[str]:
    """The words of a label, a compound read by its parts ("Upstream-Contact": upstream, contact)."""
    return frozenset(t for t in terms(label.replace("_", " ")) if "-" not in t)


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
            if not label or label <= _KIND_ONLY or not label <= asked:
                continue
            if q.answer_type and not mentions_type(m.group(2), q.answer_type):
                continue  # "who": a name; "which version": a version
            if not asked - label <= said | common:
                continue  # the question asks about more than this block says
            found.append((len(label), line.strip(), block))
    if not found:
        return None
    best = max(n for n, _, _ in found)
    lines = {line for n, line, _ in found if n == best}
    if len(lines) != 1:
        return None  # two blocks' fields named alike, with different values: which one is asked is not said
    line = next(iter(lines))
    block = next(b for n, li, b in found if li == line)
    return Outcome(line, [block.unit.id], "medium", f"the labelled line '{line.split(':', 1)[0]}' of a block")
