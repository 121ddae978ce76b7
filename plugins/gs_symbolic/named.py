"""An identifier the question writes constrains which evidence may answer it (issue 20: unanswerable questions).

"What is the default value of $Tide::Fold::margin?" over a module's manual that states the default of
`$Tide::Fold::width` and never one of the margin: the width's sentence shares "default", "value", "Tide"
and "Fold" with the question, means nearly the same, and was answered. A program's identifier (a variable,
a setting, a key, a function: `retry_backoff`, `$verbose`, `Tide::Fold`, `lineEnding`) names one thing,
and no other word stands in for it; the retrievers split it into its parts ("retry", "backoff"), so a
passage about a sibling (`backoff`, `$Tide::Fold::width`) scores on the shared parts. Evidence about the
identified thing writes its name, in the sentence or in what the sentence stands under (its entry's term,
its headings). So when the question's sentence writes an identifier that some evidence unit writes, only the
units that write it may answer; if none of them answers, the documents do not say it about that thing. A
unit that is the name alone (an rST list-table's key cell) labels the unit after it (the value cell).

An identifier most evidence units write (COMMON_SHARE, as for names: context_terms.common_terms) is the
documents' own subject ("define_stage" in its reference page, a module in its manual): it says nothing
about which part of them is asked, and constrains nothing; so is one that names a document of the evidence
(its file name's stem, its top heading: names_document), however few of the retrieved units write it; nor does one the question sets the answer against
("… instead of poll_until?"). An identifier no evidence unit writes is not covered by the evidence, as an
option is not (focus.unheld_option): the question is refused (`unwritten`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import file_title, terms
from mrpvm.protocol.document import KnowledgeUnit
from msgspec.structs import replace

from .context_terms import COMMON_SHARE
from .evidence import Sentence

# a sigiled or package-qualified name ("$verbose", "@ARGV", "$Tide::Fold::width", "Tide::Fold"), a name with an
# inner underscore ("retry_backoff", "STAGE_SLOTS"), or a camel-cased one ("lineEnding"; not "macOS")
_IDENTIFIER = lazy_pattern(
    r"(?<![\w$@%:.-])(?:[$@%][A-Za-z_]\w*(?:::\w+)*|[A-Za-z]\w*(?:::\w+)+"
    r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]{2,}[A-Z][a-z]\w*)(?![\w:])"
)


# one token quoted as a name: 'wrapmargin', "strict", `fold_depth`, `--jobs` (a letter in it; no phrase, no
# apostrophe of a possessive: "the users' 'home' directory" quotes home)
_QUOTED_NAME = lazy_pattern(
    r"(?<![\w'\"`])(?:'([A-Za-z](?:[\w.:/-]*\w)?)'|\"([A-Za-z](?:[\w.:/-]*\w)?)\"|`([^`\s]*[A-Za-z][^`\s]*)`)"
    r"(?![\w'\"`])"
)


# list markers, code quotes and emphasis around a name standing alone
_MARKUP = " \t\n*+-`'\""


# "instead of X", "other than X": the question asks for something that is not X
_CONTRASTED = lazy_pattern(
    r"\b(?:instead\s+of|rather\s+than|other\s+than|apart\s+from|besides|except(?:\s+for)?|unlike)"
    r"\s+(?:the\s+)?$",
    re.I,
)
CONTRAST_REACH = 24  # characters before a name that may hold its contrasting phrase ("except for the ")


def written_identifiers(question: str) -> list[str]:
    """The identifiers a question writes about what it asks, in order, each once: not one it sets the answer
    against ("Which module replaces poll_until on Windows?" asks about poll_until; "… instead of poll_until?"
    does not ask about it). A name the question quotes is one (quoted_names)."""
    found = [(m.start(), m.group(0)) for m in _IDENTIFIER.finditer(question)]
    found += [(m.start(), name) for m in _QUOTED_NAME.finditer(question) if (name := _quoted(m))]
    return list(
        dict.fromkeys(
            name
            for start, name in sorted(found)
            if not _CONTRASTED.search(question, max(0, start - CONTRAST_REACH), start)
        )
    )


def quoted_names(question: str) -> list[str]:
    """The names the question quotes, one token each between quotation marks or backticks ("the
    'wrapmargin' option", "`fold_depth`", "\"strict\" mode"), in order: a word quoted is mentioned, not used
    (the use-mention distinction), so it names one thing, as an identifier's shape does."""
    return list(dict.fromkeys(name for m in _QUOTED_NAME.finditer(question) if (name := _quoted(m))))


def _quoted(m: re.Match[str]) -> str:
    return next((g for g in m.groups() if g), "")


def _spelling(identifier: str) -> re.Pattern[str]:
    """The identifier as a whole token: not a part of a longer name ("margin" in "margin2", "poll_until"
    in "win_poll_until"); case aside."""
    return re.compile(rf"(?<![\w$@%]){re.escape(identifier)}(?![\w])", re.I)


def _writes(unit: KnowledgeUnit, spelling: re.Pattern[str]) -> bool:
    """The unit writes the name in its text or in what its text stands under (its term, its headings)."""
    return any(spelling.search(t) for t in (unit.body, unit.title or "", unit.sectionTitle or ""))


def _labelled(units: dict[str, KnowledgeUnit], labels: set[str], identifier: str) -> set[str]:
    """The units right after a unit that is the name alone (a table's key cell, a term line: "* - ``fold_width``"
    before "- Set to a number of columns, or ``off`` …"): what they say is said of the name."""
    places = {(u.chunkId, u.unitIndex): i for i, u in units.items()}
    out = set()
    for i in labels:
        label = units[i]
        if label.body.strip(_MARKUP).lower() != identifier.lower() or label.unitIndex is None:
            continue
        if (after := places.get((label.chunkId, label.unitIndex + 1))) is not None:
            out.add(after)
    return out


def _about(identifier: str, units: dict[str, KnowledgeUnit]) -> dict[str, frozenset[str]]:
    """The units about the identified thing: those that write its name, and those its name labels (with the
    name's terms as what they stand under)."""
    spelling = _spelling(identifier)
    writing = {i for i, u in units.items() if _writes(u, spelling)}
    under = frozenset(terms(identifier))
    return {i: frozenset() for i in writing} | {
        i: under for i in (_labelled(units, writing, identifier) | _led(units, writing)) - writing
    }


def _led(units: dict[str, KnowledgeUnit], writing: set[str]) -> set[str]:
    """The entries of a definition list whose lead-in writes the name, or the prose of its section just before
    the lead-in does ("The `name_format` setting builds … The pattern can contain these placeholders:" over
    "%u — the user's login"): an entry stands under its lead-in as under a heading, so what is said of an
    entry is said of the named thing. The lead-in is the evidence paragraph right before the list that ends
    with ':'; its prose is the run of evidence paragraphs of its section just before it; the list's entries are the
    definition units under its section (one level deeper) that follow it in its chunk with no prose between."""
    out: set[str] = set()
    for chunk in {units[i].chunkId for i in writing}:
        ordered = sorted(
            (u for u in units.values() if u.chunkId == chunk and u.unitIndex is not None),
            key=lambda u: u.unitIndex or 0,
        )
        for n, lead in enumerate(ordered):
            if lead.chunkType != "paragraph" or not lead.body.rstrip().endswith(":"):
                continue
            prose = [lead]
            for u in reversed(ordered[:n]):  # the lead-in's paragraph: its section's prose right before it
                if u.chunkType != "paragraph" or u.sectionTitle != lead.sectionTitle:
                    break
                if (u.unitIndex or 0) + len(prose) != lead.unitIndex:
                    break
                prose.append(u)
            if not any(u.id in writing for u in prose):
                continue
            for u in ordered[n + 1 :]:
                if u.chunkType != "definition" or not (u.sectionTitle or "").startswith(
                    f"{lead.sectionTitle} > "
                ):
                    break
                out.add(u.id)
    return out


def unwritten(question: str, pool: list[Sentence]) -> str:
    """The first identifier the question writes that no evidence unit writes, nor its term or headings; ""."""
    units = {s.unit.id: s.unit for s in pool}.values()
    for identifier in written_identifiers(question):
        spelling = _spelling(identifier)
        if not any(_writes(u, spelling) for u in units):
            return identifier
    return ""


def names_document(identifier: str, units: Iterable[KnowledgeUnit]) -> bool:
    """The identifier names a document of the evidence: its file name's stem ("heron_mirror" of
    heron_mirror.py) or its top heading (the first part of a unit's section path) writes it. A question that
    writes it says which document it asks about, as a site's name in a web search does, not which part of
    it: context, not a constraint on the evidence."""
    spelling = _spelling(identifier)
    return any(spelling.search(name) for name in document_names(units))


def document_names(units: Iterable[KnowledgeUnit]) -> set[str]:
    """The names the units' documents go by: their file names' stems and their top headings."""
    out: set[str] = set()
    for u in units:
        if u.sourceName and u.sourceType != "turn":
            out.add(file_title(u.sourceName))
        if u.sectionTitle:
            out.add(u.sectionTitle.split(" > ", 1)[0])
    return out - {""}


def about_named(
    question: str, pool: list[Sentence], code: list[Sentence]
) -> tuple[list[Sentence], list[Sentence]] | None:
    """The evidence (prose, code) of the units about every identifier the question writes that some, but not
    most, evidence units write (about any of them, when no unit is about them all); None when no identifier
    constrains the evidence."""
    units = {s.unit.id: s.unit for s in [*pool, *code]}
    allowed: dict[str, frozenset[str]] | None = None
    for identifier in written_identifiers(question):
        about = _about(identifier, units)
        writing = [i for i, under in about.items() if not under]
        if (
            not writing
            or len(writing) / len(units) >= COMMON_SHARE
            or names_document(identifier, units.values())
        ):
            continue  # never written (other tests judge it) or the documents' own subject
        if allowed is None:
            allowed = about
        else:  # things named together and told of apart ("… between foo_max and foo_min?"): either may answer
            both = {i: allowed[i] | about[i] for i in allowed.keys() & about.keys()}
            allowed = both or {
                i: allowed.get(i, frozenset()) | about.get(i, frozenset()) for i in allowed | about
            }
    if allowed is None:
        return None
    kept = allowed

    def narrowed(sentences: list[Sentence]) -> list[Sentence]:
        return [replace(s, under=s.under | kept[s.unit.id]) for s in sentences if s.unit.id in kept]

    return narrowed(pool), narrowed(code)
