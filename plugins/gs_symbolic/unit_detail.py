"""Which sentence of a unit carries the asked detail, when its neighbours repeat the question's words.

- written_beyond: a sentence that repeats the question's words may still state its answer as a literal
  the question does not write ("The floor division operator is ``//``."), or stand as the definition of a
  term the question does not name (a glossary's "``>>>``: The default Python prompt …"): it is no echo.
- with_led_row: a passage that ends its unit leading into a table (the next unit of its section is a code
  block of rows: "Some characters have a short escape." over "\\b  - backspace", "\\t  - tab", …) while the
  question asks of one row ("Which escape stands for a tab?"): the one row stating what the passage does
  not is quoted after it; the lead-in alone names the table, not the asked row.
- led_items: a quote that ends with a lead-in ("… except as provided here and for:") goes on with what it
  leads into, the items of its unit; a Yes/No's verdict sentence as much as a passage.
- with_means: "How do I write X?" answered by a sentence that only names X ("The last form allows writing
  X."): the next sentence of its unit, which refers back to it and tells the means ("These are written by
  using …"), is what answers, and is quoted after it.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern, refers_back
from mrpvm.plugins.sdk.text import terms
from msgspec.structs import replace

from .code_fields import table_rows
from .directives import tells_what_to_do
from .evidence import Sentence
from .lexicon import LIGHT_STEMS
from .passages import Judge, Passage

# an inline code span (``x`` or `x`), its content
_SPAN = lazy_pattern(r"(`{1,2})([^`]+?)\1")


def _spans(text: str) -> list[str]:
    return [m.group(2).strip() for m in _SPAN.finditer(text) if m.group(2).strip()]


def _unwritten(literal: str, question: str) -> bool:
    """The literal is not written in the question (as a whole, ignoring case and spacing)."""
    flat = " ".join(question.lower().split())
    return " ".join(literal.lower().split()) not in flat


def written_beyond(sentence: Sentence, question: str) -> bool:
    """The sentence writes a code span the question does not ("The floor division operator is ``//``."), or
    leads a definition whose term the question does not write (``>>>``: the term is what it answers)."""
    if any(_unwritten(span, question) for span in _spans(sentence.text)):
        return True
    unit = sentence.unit
    if unit.chunkType != "definition" or not unit.title or sentence.order[2] != 0:
        return False
    term = unit.title.strip()
    inner = _spans(term) or [term]
    return any(_unwritten(part, question) for part in inner)


ROW_SHARE = 0.5  # the asked row states at least this share of the question's weight the passage leaves unsaid


def _led_table(last: Sentence, pool: list[Sentence], code: list[Sentence]) -> Sentence | None:
    """The code block of rows `last` leads into: `last` ends its unit, and the block is the next unit of the
    same section."""
    unit = last.unit
    if unit.unitIndex is None or unit.chunkType == "code" or last.code:
        return None
    if any(s.unit.id == unit.id and s.order > last.order for s in pool):
        return None  # more of its own unit follows: it leads into nothing
    for block in code:
        after = block.unit
        if (
            after.sourceId == unit.sourceId
            and after.chunkId == unit.chunkId
            and after.unitIndex == unit.unitIndex + 1
            and after.chunkType == "code"
            and table_rows(block)
        ):
            return block
    return None


def with_led_row(p: Passage, pool: list[Sentence], code: list[Sentence], judge: Judge) -> Passage:
    """The passage, and the row of the table its last sentence leads into that states what the question asks
    beyond the passage (see the module docstring); the passage itself when no one row does."""
    block = _led_table(p.sentences[-1], pool, code)
    if block is None:
        return p
    weights = judge.scorer.weights
    unsaid = {t for t in set(weights) - judge.said(p) if t not in LIGHT_STEMS}
    total = sum(weights[t] for t in unsaid)
    if total <= 0:
        return p
    stated = [(sum(weights[t] for t in unsaid & set(terms(line))), line) for _, line in table_rows(block)]
    best = max((value for value, _ in stated), default=0.0)
    rows = [line for value, line in stated if value == best]
    if best < ROW_SHARE * total or len(rows) != 1:
        return p  # no row states it, or several do alike: which one is asked is not told
    row = replace(block, text=" ".join(rows[0].split()))
    return replace(p, sentences=[*p.sentences, row])


# a means: "by using …", "by writing …", "using …", "via …", "through …"
_MEANS = lazy_pattern(r"\b(?:by\s+\w+ing|using|via|through)\b", re.I)
MEANS_MAX_CHARS = 400  # the passage and the sentence telling the means, together at most


def with_means(p: Passage, judge: Judge, pool: list[Sentence]) -> Passage:
    """A "how do I …" passage that states every word of the question and no means (no instruction, code,
    command or "by …"), followed in its unit by a sentence that refers back to it and tells the means: the
    passage with that sentence (see the module docstring)."""
    if set(judge.scorer.weights) - judge.said(p) or tells_what_to_do(p.sentences):
        return p
    if any(_MEANS.search(s.text) for s in p.sentences):
        return p
    last = p.sentences[-1]
    after = min(
        (s for s in pool if s.unit.id == last.unit.id and s.order > last.order),
        default=None,
        key=lambda s: s.order,
    )
    if after is None or after.code or not refers_back(after.text.strip()):
        return p
    if not (_MEANS.search(after.text) or tells_what_to_do([after])):
        return p
    if len(p.text) + len(after.text) > MEANS_MAX_CHARS:
        return p
    return replace(p, sentences=[*p.sentences, after])


MAX_LED = 4  # a lead-in is quoted with at most this many of the items it leads into


def led_items(
    quoted: list[Sentence], pool: list[Sentence], most: int = MAX_LED, budget: int | None = None
) -> list[Sentence]:
    """`quoted` (sentences of one unit, in order) and, when the last ends with a colon, the sentences of its
    unit after it (the list or code it leads into): up to `most` of them, to the first code block, and, with
    a `budget`, while the whole stays within that many characters."""
    last = quoted[-1]
    if last.code or not last.text.rstrip().endswith(":"):
        return quoted
    out = list(quoted)
    size = sum(len(s.text) + 1 for s in quoted)
    following = sorted(
        (s for s in pool if s.unit.id == last.unit.id and s.order > last.order), key=lambda s: s.order
    )
    for s in following:
        if budget is not None and size + len(s.text) + 1 > budget:
            break
        out.append(s)
        size += len(s.text) + 1
        if s.code or len(out) >= len(quoted) + most:
            break
    return out
