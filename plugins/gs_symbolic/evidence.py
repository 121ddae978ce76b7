"""Evidence as sentences: split units into sentences, keep reading order, score them against the question."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import NamedTuple

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern, refers_back
from mrpvm.plugins.sdk.text import (
    sentence_spans,
    terms,
    text_terms,
)
from mrpvm.protocol.document import KnowledgeUnit

from .compounds import closed_compounds, with_compounds
from .unit_pieces import sentences_of, unit_pieces

_STEP_PREFIX = lazy_pattern(r"^\s*(?:(?:step\s*)?\d+\s*[.):]\s*|[-*•]\s+)", re.I)


class Sentence(msgspec.Struct):
    text: str
    unit: KnowledgeUnit
    terms: list[str]  # content stems in reading order (repeats kept, for ordered matching)
    order: tuple[int, int, int]  # (source rank, position of the unit in its source, sentence index)
    sources: tuple[str, ...] = ()  # for a proved conclusion: the units of its proof
    carried: frozenset[str] = frozenset()  # terms of the antecedent a leading pronoun refers to
    under: frozenset[str] = frozenset()  # terms of the heading a list item or table row stands under
    code: bool = False  # a code block or data line: evidence only when the question asks for code
    lead: bool = False  # the sentence that leads into a list or table's items ("Output fields:")

    @property
    def unit_ids(self) -> tuple[str, ...]:
        return self.sources or (self.unit.id,)


def procedure_steps(unit: KnowledgeUnit) -> list[str]:
    """The steps of a Procedure unit, in order, without their numbering; a step's fenced code block (sd
    puts it on the lines after the step) is part of the step."""
    return _steps(unit.procedure or unit.claim or "")


def _steps(body: str) -> list[str]:
    lines = [ln for ln in body.split("\n") if ln.strip()]
    if len(lines) == 1:
        # one line: numbered inline ("1. a 2. b") or plain sentences
        inline = re.split(r"\s+(?=\d+[.)]\s)", lines[0])
        lines = inline if len(inline) > 1 else [lines[0][a:b] for a, b in sentence_spans(lines[0])]
    steps: list[str] = []
    fenced = False
    for ln in lines:
        if ln.lstrip().startswith("```") or fenced:  # a step's code block stays with the step
            if ln.lstrip().startswith("```"):
                fenced = not fenced
            if steps:
                steps[-1] += "\n" + ln
                continue
        step = ln if fenced else _STEP_PREFIX.sub("", ln).strip()
        if step:
            steps.append(step)
    return steps


_FOOTNOTE_LABEL = lazy_pattern(r"^\[\^[^\]\s]{1,20}\]$")


def about(unit: KnowledgeUnit) -> str:
    """What a definition unit is about: its term, or for a footnote what cites it (its Topic)."""
    label = unit.title or ""
    return unit.topic if not label or _FOOTNOTE_LABEL.match(label) else label


_LEVEL = {"atomic": 0, "composite": 1, "aggregate": 2}


_QUESTION_END = lazy_pattern(r"\?[\"'\u201d\u2019)\]]*\s*$")
_QUESTION_LABEL = lazy_pattern(r"^\s*(?:q|question)\s?\d{1,3}\s*[:.)]", re.I)  # "Q2: Compare ..." is asked
# pictures and the markup around them: Markdown images (inline or by reference), HTML tags, link targets
_PICTURE = lazy_pattern(r"!\[[^\]\n]*\](?:\((?:[^()\s]|\([^()\s]*\))*\)|\[[^\]\n]*\])|<[^<>\n]+>")
_LINK_REST = lazy_pattern(r"\]\((?:[^()\s]|\([^()\s]*\))*\)|\]\[[^\]\n]*\]|[\[\]]")
_ITEMIZED = frozenset({"list", "table", "section"})  # units whose lines may not name their topic
LISTS = frozenset({"list", "table"})  # units made of items: one may be asked for whole, by its heading
_LED = LISTS  # units whose first sentence may lead into their items ("Rules:")


class _Statement(NamedTuple):
    """One piece of a unit's text with what `split_units` reads from it (all of it a function of the text)."""

    text: str
    code: bool
    record: str
    found: tuple[str, ...]  # its terms and notation terms
    question: bool  # it asks rather than states
    leads: bool  # it ends with ':' (may lead into a list's items)
    pronoun: bool  # it opens with a pronoun
    norm: str  # lower-cased, whitespace-collapsed: the key that finds a sentence repeated across units


MEMO_UNITS = 4096  # units whose statements a warm worker keeps (the same KB units come back call after call)


def _unit_statements(unit: KnowledgeUnit) -> tuple[_Statement, ...]:
    if unit.role == "Procedure":
        return _statements(True, unit.procedure or unit.claim or "", "")
    return _statements(False, unit.claim or "", unit.title or "")


@lru_cache(maxsize=MEMO_UNITS)
def _statements(procedure: bool, text: str, title: str) -> tuple[_Statement, ...]:
    """The statements of a unit's text (a procedure's steps, else its pieces under `title`), analysed
    once per distinct text."""
    if procedure:
        pieces = [(s, False, "") for p in _steps(text) for s in sentences_of(p)]
    else:
        pieces = unit_pieces(text, title)
    return tuple(
        _Statement(
            piece,
            code,
            record,
            tuple(text_terms(piece)),
            bool(_QUESTION_END.search(piece) or _QUESTION_LABEL.match(piece)),
            piece.rstrip().endswith(":"),
            refers_back(piece.strip()),
            "" if pictures_only(piece) else " ".join(piece.lower().split()),
        )
        for piece, code, record in pieces
    )


def one_word(text: str) -> bool:
    """A sentence of one word ("Beware!", "Note:", "Yes."): an interjection or a label, which states nothing a
    pronoun after it could refer to."""
    return len(text.split()) == 1


def pictures_only(piece: str) -> bool:
    """The piece is pictures and markup only (a README's row of badges, a logo): it states nothing, and the
    alt texts of its images ("PyPI Version", "License") name pictures, not facts."""
    if "![" not in piece and "<" not in piece:
        return False
    return not re.search(r"[^\W_]", _LINK_REST.sub(" ", _PICTURE.sub(" ", piece)))


# a lead-in without a main clause of its own ("If the name is missing:", "When the token expires:"): the block
# after it is its consequence
BARE_CONDITION = re.compile(r"^\s*(?:if|when|whenever|unless|once|in case)\b[^.;]*:\s*$", re.I)


def _leads_into_code(unit: KnowledgeUnit, statements: tuple[_Statement, ...], n: int) -> bool:
    """Statement n of a code unit is a bare condition ending with ':' right before a code block: the block is
    what follows from it ("If the name is missing:" over the error the reply carries), and the condition is
    found through the block's words (for scoring only; the block is quoted with it: spans.with_led_code). A
    sentence with a main clause of its own ("Keep this list in a lock file:") says what it says itself."""
    st = statements[n]
    return (
        unit.chunkType == "code"
        and not st.code
        and n + 1 < len(statements)
        and statements[n + 1].code
        and BARE_CONDITION.match(st.text) is not None
    )


def split_units(units: list[KnowledgeUnit]) -> list[Sentence]:
    """Every distinct sentence of the units, atomic units first when a sentence repeats across levels.

    A sentence opening with a pronoun ("It owns ...") carries the terms of the sentence before it (the
    unit's Subject or Topic for its first sentence), for scoring only: cheap coreference, never used to
    claim that a sentence states something.
    A bare condition ending with ':' before a code block of its unit carries the block's terms, for scoring only.
    A question (ending with '?', or labelled "Q2:") states nothing, so it is never an evidence sentence (a source that lists questions would
    otherwise answer them with themselves); its terms carry into the sentence that follows it in the
    unit, for scoring only (an FAQ's answer is found through its question).
    """
    source_rank: dict[str, int] = {}
    for unit in units:
        source_rank.setdefault(unit.sourceId, len(source_rank))
    ordered = sorted(enumerate(units), key=lambda p: (_LEVEL.get(p[1].kuType, 0), p[0]))
    seen: dict[str, Sentence] = {}
    out: list[Sentence] = []
    for idx, unit in ordered:
        statements = _unit_statements(unit)
        position = unit.position(idx)  # source order, whatever order units arrive in
        # a unit that opens with a pronoun is about its Subject/Topic (sd-symbolic sets it to the antecedent)
        previous: list[str] = terms(unit.subject or unit.topic or "")
        # the items of a list or table are about the heading they stand under ("Exit Codes": "2 — invalid input")
        # and about the sentence that leads into them ("Output fields:")
        under = frozenset(terms(unit.heading))
        if unit.chunkType == "definition":  # every sentence of a definition is about its term
            under = frozenset(terms(about(unit))) | frozenset(terms(unit.heading))
        asked: list[str] = []
        for n, st in enumerate(statements):
            found = list(st.found)
            if st.question:
                asked += found
                continue
            lead = n == 0 and unit.chunkType in _LED and st.leads and len(statements) > 1
            if lead:
                under = under | frozenset(found)
            carried = frozenset(previous) if st.pronoun else frozenset()
            antecedent = carried  # what a pronoun after this one also refers to ("This allows … To do so, …")
            if st.record:  # a header block's field is about the record its first field names
                carried |= frozenset(terms(st.record))
            if asked:
                carried, asked = carried | frozenset(asked), []
            if _leads_into_code(unit, statements, n):
                carried |= frozenset(statements[n + 1].found)  # "If the name is missing:" over the reply
            if not one_word(st.text):  # "Beware!", "Note:": no statement, so no antecedent
                previous = [*found, *antecedent]
            norm = st.norm
            if not norm:
                continue
            if norm in seen:
                # a sentence that sums up its section is about the section's heading too
                first_seen = seen[norm]
                if unit.kuType == "composite" and under and not first_seen.under:
                    first_seen.under = under
                continue
            order = (source_rank[unit.sourceId], position, n)
            seen[norm] = Sentence(
                st.text.strip(), unit, found, order, carried=carried, under=under, code=st.code, lead=lead
            )
            out.append(seen[norm])
    return out


UNKNOWN_FACTOR = 0.5


class Scorer:
    """Weighted term overlap: rarer terms (within this evidence) weigh more.

    `score` is normalised by the weight of the question terms the evidence contains at all (a
    question's rhetoric, "uniquely qualified", should not sink every sentence); `coverage` by all of
    them, so confidence still drops when the question asks about things the evidence never names.
    """

    SUPPORT = 0.5  # weight factor of terms from the intent's Context line

    def __init__(
        self,
        pool: list[Sentence],
        question_terms: list[str],
        names: list[list[str]] | None = None,
        support: list[str] | None = None,
        collection: dict[str, float] | None = None,
        essential: frozenset[str] = frozenset(),
        question: str = "",
    ):
        n = max(1, len(pool))
        df: dict[str, int] = {}
        for s in pool:
            for t in set(s.terms):
                df[t] = df.get(t, 0) + 1
        # a heading's terms are in the evidence too ("design goals" over the list it heads)
        headed = frozenset().union(*(s.under for s in pool)) if pool else frozenset()
        self.compounds = closed_compounds(question, question_terms, set(df) | headed) if question else []
        for parts, joined in self.compounds:
            for t in parts:  # the compound's words are as frequent as it is
                df[t] = df.get(t, 0) or df.get(joined, 0)
            headed |= parts if joined in headed else frozenset()

        def idf(t: str) -> float:
            """The collection's weight when the retriever gave it (a few selected units make every word
            look rare), else the weight within the evidence."""
            if collection and collection.get(t):
                return collection[t] + 0.1
            return math.log(1.0 + n / (1 + df.get(t, 0))) + 0.1

        # a question word the whole collection never uses: no passage can state it, so it counts at half
        # weight towards what a passage must cover (a paraphrase, or what the source does not say) — unless
        # it is `essential`: the kind of thing asked for ("which database …")
        self.unknown = {t for t, w in (collection or {}).items() if w == 0} - essential
        self.collection_known = bool(collection)  # the retriever said which terms the collection holds

        weight = {t: idf(t) for t in question_terms}
        for t in support or []:
            weight.setdefault(t, self.SUPPORT * idf(t))
        self.weights = weight
        # a multi-word name is one concept: any of its parts mentions it, weighted as its rarest part
        self.groups: list[tuple[frozenset[str], float, bool]] = []
        grouped: set[str] = set()
        for name in names or []:
            parts = frozenset(t for t in name if t in weight)
            if len(parts) >= 2:
                present = any(df.get(t) or t in headed for t in parts)
                self.groups.append((parts, max(weight[t] for t in parts), present))
                grouped |= parts
        for t, w in weight.items():
            if t not in grouped:
                self.groups.append((frozenset([t]), w, bool(df.get(t)) or t in headed))
        self.total = sum(w for _, w, _ in self.groups) or 1.0
        self.present = sum(w for _, w, p in self.groups if p) or 1.0
        # the question's own terms (not the Context line's): what answering it is measured on
        own = set(question_terms)
        self.asked = [
            (parts, w * (UNKNOWN_FACTOR if parts <= self.unknown else 1.0))
            for parts, w, _ in self.groups
            if parts & own
        ]
        self.asked_total = sum(w for _, w in self.asked) or 1.0

    def _matched(self, have: set[str]) -> float:
        if self.compounds:
            have = with_compounds(have, self.compounds)
        return sum(w for parts, w, _ in self.groups if parts & have)

    UNDER = 0.5  # weight factor of terms only the heading above a list item names

    def own_score(self, sentence: Sentence) -> float:
        """The score without the heading's terms: what the sentence itself says about the question."""
        return self._matched(set(sentence.terms) | sentence.carried) / self.present

    def headed(self, sentence: Sentence) -> bool:
        """The heading (and lead-in) above the sentence name all the question asks for ("What are the exit
        codes?" over the list under "Exit Codes"): the question is about the whole list or section."""
        return bool(sentence.under) and self._matched(set(sentence.under)) >= self.total

    def score(self, sentence: Sentence) -> float:
        own = self.own_score(sentence)
        if not sentence.under:
            return own
        with_heading = self._matched(set(sentence.terms) | sentence.carried | sentence.under) / self.present
        if self.headed(sentence):
            return with_heading
        return own + self.UNDER * (with_heading - own)

    def asked_coverage(self, have: set[str]) -> float:
        """Weighted share of the question's own terms (Context-line terms left out) that `have` holds."""
        if self.compounds:
            have = with_compounds(have, self.compounds)
        return sum(w for parts, w in self.asked if parts & have) / self.asked_total

    def coverage(self, chosen: list[Sentence]) -> float:
        have: set[str] = set()
        for s in chosen:
            have.update(s.terms)
        return self._matched(have) / self.total


def relevant(pool: list[Sentence], scorer: Scorer, limit: int, ratio: float = 0.35) -> list[Sentence]:
    """Sentences that share weighted terms with the question, the best `limit`, back in reading order."""
    scored = [(scorer.score(s), s) for s in pool]
    scored = [(sc, s) for sc, s in scored if sc > 0]
    if not scored:
        return []
    best = max(sc for sc, _ in scored)
    keep = [(sc, s) for sc, s in scored if sc >= best * ratio]
    # In a list whose items match the question, an item that matches only through the heading above it
    # ("0 — success" under "Exit Codes" for "which exit code means invalid input") is not the answer.
    specific = {
        s.unit.id
        for _, s in keep
        if s.under and not s.lead and not scorer.headed(s) and scorer.own_score(s) > 0
    }
    if specific:
        keep = [(sc, s) for sc, s in keep if s.unit.id not in specific or s.lead or scorer.own_score(s) > 0]
    keep.sort(key=lambda p: (-p[0], p[1].order))
    # items that match only through their heading or lead-in answer together: one list takes one place
    chosen: list[Sentence] = []
    lists: set[str] = set()
    places = 0
    for _, s in keep:
        whole = s.unit.id if s.under and (s.lead or scorer.own_score(s) == 0) else None
        if whole is None or whole not in lists:
            if places >= limit:
                continue
            places += 1
            if whole is not None:
                lists.add(whole)
        chosen.append(s)
    return sorted(chosen, key=lambda s: s.order)


def is_subsequence(needle: list[str], hay: list[str]) -> tuple[int, int] | None:
    """(first, last) positions where needle occurs in hay in order (gaps allowed), else None."""
    if not needle:
        return None
    pos = 0
    first = -1
    for i, tok in enumerate(hay):
        if tok == needle[pos]:
            if pos == 0:
                first = i
            pos += 1
            if pos == len(needle):
                return first, i
    return None
