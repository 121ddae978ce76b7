"""A value stated of a neighbouring entry (issue 20: refusal that generalizes to documents not tuned on).

A reference documents its entries one after another (a manifest's fields, a tool's subcommands, a file's
settings), and they state values in the same words: "Use a maximum of 64 characters of length." under the
*name* field, "_Available since Ninja 1.13._" closing the *inputs* tool's entry. "What is the maximum length
of the description field?" and "Since which Ninja version is the compdb-targets tool available?" share the
attribute's words with those sentences, so the ranking quotes them; the figure or version is another entry's.

A question naming an entry by its name and kind ("the description field", "the compdb-targets tool", "the
timeout setting": a name followed by a classifier noun) asks the value of that entry. When it asks a value of
a marked type (a figure, a version, a date, a duration) or a default, the quoted passage must write the
entry's name, in its own unit or in the headings it stands under; otherwise the documents do not state the
asked entry's value. A name the collection never holds is left to `unsaid_thing` (the retriever weighs it
0); a name written by a synonym (MiniLM's cosine >= SYNONYM) counts as written.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.embedding import usable
from mrpvm.plugins.sdk.lexicon import EXTREME_MODIFIERS
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, terms

from .context_terms import unit_text
from .documented import KIND_NOUNS
from .focus import has_neighbour
from .passages import Judge, Passage
from .question import Question
from .render import passage_text
from .unsaid import SYNONYM

# the nouns that classify an entry of a reference, besides an option's or a field's (documented.KIND_NOUNS):
# a section or table of a file, a tool or command of a program, a flag, a variable, a function
_ENTRY_KINDS = (
    *KIND_NOUNS,
    "section",
    "table",
    "tool",
    "subcommand",
    "command",
    "flag",
    "variable",
    "function",
)
# "the default timeout setting", "the maximum retries option": what is asked of the entry, not its name
_NOT_NAMES = frozenset(["default", "defaults", "same", "other", "new", "first", "last", "current"])
# "the description field", "the `--jobs` flag", "the compdb-targets tool", "the default timeout setting": the
# word before the classifier (one word of what is asked of it may come first; "the health check command"
# names no entry "check")
_NAMED_ENTRY = lazy_pattern(
    r"\bthe\s+(?:(?:" + "|".join(sorted(_NOT_NAMES | EXTREME_MODIFIERS)) + r")\s+)?"
    r"[`'\"]?([\w.-]*\w)[`'\"]?\s+(?:" + "|".join(_ENTRY_KINDS) + r")\b",
    re.I,
)


def named_entries(question: str) -> list[str]:
    """The names of the entries the question names by name and kind ("the badges section" → badges)."""
    names = []
    for m in _NAMED_ENTRY.finditer(question):
        name = m.group(1)
        if name.lower() not in STOPWORDS | _NOT_NAMES | EXTREME_MODIFIERS:
            names.append(name)
    return names


def unheld_entry(q: Question, passage: Passage, judge: Judge) -> str:
    """The name of an entry the question asks a value of that the collection holds but the quoted passage
    does not write: neither its units nor the headings it stands under name it, nor a synonym of it. ""
    when every named entry is written, or none is named."""
    if not q.collection or not named_entries(q.focus or q.text):
        return ""
    texts = _unit_texts(passage)
    written = judge.said(passage) | set(terms(passage_text(passage)))
    written |= {t for text in texts for t in terms(text)}
    for name in named_entries(q.focus or q.text):
        parts = [t for t in terms(name) if "-" not in t] or terms(name)
        if not parts or any(q.collection.get(t) == 0 for t in parts):
            continue  # not a term the retriever weighed, or one the documents never hold: unsaid_thing's
        if all(t in written for t in parts):
            continue
        if not usable() or not has_neighbour(name, texts, SYNONYM):
            return name
    return ""


def _unit_texts(p: Passage) -> list[str]:
    """The texts of the units the passage's sentences come from, their titles with them."""
    units = {id(s.unit): s.unit for s in p.sentences}.values()
    return [unit_text(u) for u in units]
