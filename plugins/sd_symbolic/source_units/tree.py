"""normalizePersistentContext: a source text becomes a hierarchical KU tree (DS030 / DS018).

    <sourceId>::source-summary                      aggregate: extractive summary of the whole source
      <sourceId>::section-NNN                       composite: a heading's section, or a paragraph cluster
        <sourceId>::chunk-NNN::unit-NNN             atomic: 2-4 related sentences, one fact sentence,
                                                    a procedure (steps in order), list items, table rows, code

Chunk NNN and section NNN share their number (a chunk is the span of one section). Atomic units cover the
source's segments exactly once and text[CharStart:CharEnd] is their text body; headings are carried by the
composite of their section (Title, SectionTitle, Topic). Everything is a single pass or a bounded window:
linear in the size of the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.protocol.digests import sha256
from mrpvm.protocol.document import KnowledgeUnit

from ..shared.roles import condition_of, group_role
from ..shared.topics import content_runs, topic_of
from ..shared.triples import Triple
from .code_claims import FENCED, code_block, fenced, numbered_steps
from .grouping import Spec, make_specs
from .pieces import (
    INLINE_MARKUP,
    Piece,
    anaphoric,
    clean,
)
from .sections import Section
from .segments import Block
from .summaries import MAX_SUMMARY_CHARS, join_summary, summarize_span, verbatim_summary

_PERSONAL = lazy_pattern(r"^(?:it|its|they|their|he|his|she|her)\b", re.I)


@dataclass(slots=True)
class SourceMeta:
    source_id: str
    source_name: str
    source_type: str
    author: str | None = None
    knowledge_date: str | None = None
    chunk_base: int = 0
    char_offset: int = 0
    created_at: str = ""

    def provenance(self) -> dict[str, Any]:
        """The fields every unit of the source carries from it (KnowledgeUnit keyword arguments)."""
        return {
            "sourceId": self.source_id,
            "sourceName": self.source_name,
            "sourceType": self.source_type,
            "author": self.author,
            "knowledgeDate": self.knowledge_date,
            "ingestedAt": self.created_at,
            "createdAt": self.created_at,
        }


def content_hash(text: str) -> str:
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def source_id_for(name: str, text: str) -> str:
    """A stable id: a slug of the source name, else a hash of its text."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48]
    return f"src-{slug}" if slug else f"src-{content_hash(text)[:12]}"


# --------------------------------------------------------------------------- units


def _atomic(spec: Spec, text: str, meta: SourceMeta, sec: Section, chunk: int, index: int) -> KnowledgeUnit:
    first = spec.intro or spec.pieces[0]
    start, end = first.seg.start, spec.pieces[-1].seg.end
    body = text[start:end]
    texts = [p.clean for p in spec.pieces]
    section_topic = INLINE_MARKUP.sub("", sec.title or "").strip()  # "`kb-fast`" names kb-fast
    role: str
    claim: str | None = None
    procedure: str | None = None
    triple: Triple | None = None
    title: str | None = None
    if spec.kind == "procedure":
        role = "Procedure"
        lines = [spec.intro.clean] if spec.intro else []
        lines += numbered_steps(spec.pieces)
        procedure = "\n".join(lines)
        topic = (
            _procedure_topic(spec.intro.clean) if spec.intro else section_topic or topic_of(texts, "steps")
        )
        unit_type = "procedure"
    elif spec.kind == "definition":
        claim, title, topic, role, unit_type = _definition(spec)
    elif spec.kind == "fact":
        triple = spec.pieces[0].triple
        assert triple is not None
        claim = texts[0]
        role = spec.pieces[0].cue or "Description"
        topic = triple.subject
        unit_type = "fact"
    elif spec.kind == "code":
        # with its introducing sentence, if any; code from a plain-text source is fenced in the claim
        role, claim, unit_type = "Description", body if FENCED.search(body) else fenced(spec), "code"
        topic = (spec.intro and _procedure_topic(spec.intro.clean)) or section_topic or "code"
    elif spec.kind == "table":
        role, unit_type = "Description", "table"
        claim = "\n".join(([spec.intro.clean] if spec.intro else []) + texts)
        title = f"Columns: {spec.header}" if spec.header else None
        topic = section_topic or topic_of(([spec.intro.clean] if spec.intro else []) + texts[:1], "table")
    else:
        all_texts = ([spec.intro.clean] if spec.intro else []) + texts
        cues = ([spec.intro.cue] if spec.intro else []) + [p.cue for p in spec.pieces]
        pasts = ([spec.intro.past] if spec.intro else []) + [p.past for p in spec.pieces]
        role = group_role(all_texts, cues, pasts)
        if spec.kind == "list":
            items = [
                code_block(p.clean) if p.seg.kind == "code" else f"{p.seg.marker} {t}" if p.seg.marker else t
                for p, t in zip(spec.pieces, texts, strict=True)
            ]
            claim = "\n".join(([spec.intro.clean] if spec.intro else []) + items)
            unit_type = "list"
            # a list is about what introduces it: its lead-in sentence, else the heading it stands under
            # ("Exit Codes", not "success" from its first item); a long list's later parts keep the lead
            lead = spec.intro or spec.lead
            topic = _procedure_topic(lead.clean) if lead else section_topic or topic_of(texts[:3])
        else:
            claim = _joined(all_texts)
            unit_type = "sentence-group" if len(all_texts) > 1 else "sentence"
            if all(t.endswith("?") for t in all_texts):
                unit_type = "question"  # a question in a source states nothing
            topic = _group_topic(([spec.intro] if spec.intro else []) + spec.pieces, section_topic)
    if not topic:
        topic = section_topic or (content_runs(claim or procedure or "", limit=1) or ["text"])[0]
    condition = condition_of(first.clean) if spec.kind != "code" else None
    off = meta.char_offset
    return KnowledgeUnit(
        **meta.provenance(),
        id=f"{meta.source_id}::chunk-{chunk:03d}::unit-{index:03d}",
        chunkId=f"{meta.source_id}::chunk-{chunk:03d}",
        kuType="atomic",
        role=role,
        topic=topic,
        claim=claim,
        procedure=procedure,
        title=title,
        condition=condition,
        subject=triple.subject if triple else None,
        relation=triple.relation if triple else None,
        object=triple.object if triple else None,
        confidence=triple.confidence if triple else None,
        hash=content_hash(body),
        chunkIndex=chunk,
        unitIndex=index,
        unitType=unit_type,
        # TextBody only when it says more than the claim modulo whitespace (kb plugins index both); a
        # definition's claim and title say all of it
        textBody=None
        if spec.kind == "definition"
        or claim is body  # fenced code: its claim is its body
        or clean(body) == clean(claim if claim is not None else procedure or "")
        else body,
        chunkType=_CHUNK_TYPES.get(spec.kind, "paragraph"),
        sectionTitle=_heading_path(sec.path, title if spec.kind == "definition" else None),
        charStart=start + off,
        charEnd=end + off,
    )


def _heading_path(path: str | None, term: str | None) -> str | None:
    """The heading path a unit stands under: a definition's own term line ("-L, --location") is the
    heading of its description (a citation names it), below the section's path."""
    if not term:
        return path
    term = " ".join(INLINE_MARKUP.sub("", term).split())
    return f"{path} > {term}" if path else term


_ENDED = re.compile(r"[.!?:;,]['\"”’)\]]*$")


def _joined(texts: list[str]) -> str:
    """Sentences read one after another; a text that ends without punctuation (a paragraph's last line, "…
    takes place on GitHub: https://…") ends its paragraph, so the next sentence is not read into it."""
    out = texts[0] if texts else ""
    for prev, text in zip(texts, texts[1:], strict=False):
        out += (" " if _ENDED.search(prev.rstrip()) else "\n\n") + text
    return out


_LINE_GAP = re.compile(r" *\n *")


def _definition(spec: Spec) -> tuple[str, str | None, str, str, str]:
    """(claim, title, topic, role, unit type) of a term and its description, or of an entry (a bullet
    with paragraphs of its own, led by its first paragraph). Code stays fenced inside the claim."""
    parts: list[str] = []
    field_before = False
    for p in spec.pieces:
        if p.seg.kind == "term":
            continue
        if p.seg.kind == "code":
            parts.append(f"\n```\n{p.clean.strip()}\n```\n")
        elif p.seg.comment and not p.clean.rstrip().endswith((".", "!", "?", ":")):
            parts.append(p.clean + "\n")  # a comment's statement without a full stop ends at its line
        elif p.seg.field:  # a YAML entry's fields ("type: int", "default: 300"): each on its line, apart from
            # the prose before them (a description without a full stop is not glued to "returned: always")
            # (a part that ends its line already, a comment or code, needs one newline more, not two)
            gap = "" if field_before else "\n" if parts and parts[-1].endswith("\n") else "\n\n"
            parts.append(gap + p.clean + "\n")
        else:
            parts.append(p.clean)
        field_before = p.seg.field
    claim = _LINE_GAP.sub("\n", " ".join(parts)).strip() or (spec.header or "")
    texts = [p.clean for p in spec.pieces if p.seg.kind not in ("term", "code")]
    role = group_role(texts or [claim], [p.cue for p in spec.pieces], [p.past for p in spec.pieces])
    if spec.header is not None:
        term = INLINE_MARKUP.sub("", spec.header).strip()
        return claim, spec.header, term, "Definition" if role == "Description" else role, "definition"
    lead = spec.lead or spec.pieces[0]
    return claim, None, topic_of([lead.clean], lead.clean[:60]), role, "entry"


_PURPOSE = lazy_pattern(r"^(?:in order\s+)?to\s+(.+?)(?:,\s*(?:follow|do|use|run|perform)\b.*)?[:.]?$", re.I)


def _procedure_topic(intro: str) -> str:
    """'To install restic on Debian:' -> 'install restic on Debian'."""
    m = _PURPOSE.match(intro.strip())
    if m and len(m.group(1).split()) <= 8:
        return m.group(1).strip(" :.,")
    return topic_of([intro], intro.rstrip(":. ")[:60])


_SUBJECT_REACH = 24  # a sentence's topic found this close to its start is its subject


def _group_topic(pieces: list[Piece], fallback: str) -> str:
    """The topic of a group of sentences. When its sentences do not share one ("The hammer is in the red
    box. The saw is kept in the garage."), the topics of its sentences joined, so the label names each."""
    texts = [p.clean for p in pieces[:3]]
    topic = topic_of(texts, fallback)
    own = [p.clean for p in pieces if not anaphoric(p)]  # "It is …" is about the sentence before it
    if len(own) < 2 or all(topic.lower() in t.lower() for t in own):
        return topic
    parts: list[str] = []
    for t in own[:3]:
        part = topic_of([t], "")
        if not part or not 0 <= t.lower().find(part.lower()) <= _SUBJECT_REACH:
            return topic  # a sentence whose topic is not its opening subject: keep the group's topic
        if any(set(part.lower().split()) & set(p.lower().split()) for p in parts):
            return topic  # "boiler heats", "boiler shuts": one subject
        parts.append(part)
    return ", ".join(parts) if len(parts) > 1 else topic


_CHUNK_TYPES = {
    "list": "list",
    "procedure": "list",
    "table": "table",
    "code": "code",
    "definition": "definition",
}


def majority_role(roles: list[str]) -> str:
    """The most frequent role but Procedure; ties: the first seen (as Counter.most_common(1) picks)."""
    counted: dict[str, int] = {}
    for r in roles:
        if r != "Procedure":
            counted[r] = counted.get(r, 0) + 1
    return max(counted.items(), key=itemgetter(1))[0] if counted else "Description"


def section_units(
    text: str, meta: SourceMeta, blocks: list[Block], pieces: dict[int, list[Piece]], sec: Section, s_idx: int
) -> tuple[list[KnowledgeUnit], KnowledgeUnit]:
    """The atomic units of a section, in text order, and its composite."""
    chunk = meta.chunk_base + s_idx
    sid = meta.source_id
    section_id = f"{sid}::section-{chunk:03d}"
    children: list[KnowledgeUnit] = []
    owner: dict[int, str] = {}
    for u_idx, spec in enumerate(make_specs(sec, blocks, pieces)):
        unit = _atomic(spec, text, meta, sec, chunk, u_idx)
        unit.parentUnitIds = [section_id]
        if children and unit.relation is None and _PERSONAL.match((spec.intro or spec.pieces[0]).clean):
            # "It supports …" is about what the unit before it is about (its subject, else its topic)
            unit.topic = children[-1].subject or children[-1].topic
        children.append(unit)
        for p in spec.pieces:
            owner[id(p)] = unit.id
    own = [p for k in sec.blocks for p in pieces.get(k, ())]
    summary = summarize_span(own)
    title = sec.title if sec.part == 1 or sec.title is None else f"{sec.title} (part {sec.part})"
    claim = (
        join_summary(summary)
        or verbatim_summary(text, sec, blocks)
        or sec.title
        or clean(text[sec.start : sec.end])[:MAX_SUMMARY_CHARS]
    )
    off = meta.char_offset
    composite = KnowledgeUnit(
        **meta.provenance(),
        id=section_id,
        chunkId=f"{sid}::chunk-{chunk:03d}",
        kuType="composite",
        role=majority_role([c.role for c in children]),
        topic=sec.title or topic_of([p.clean for p in summary] or [claim], "section"),
        claim=claim,
        title=title,
        hash=content_hash(text[sec.start : sec.end]),
        chunkIndex=chunk,
        unitType="section-summary",
        childUnitIds=[c.id for c in children],
        parentUnitIds=[f"{sid}::source-summary"],
        derivedFromUnitIds=list(dict.fromkeys(owner[id(p)] for p in summary if id(p) in owner)),
        charStart=sec.start + off,
        charEnd=sec.end + off,
        chunkType="section",
        sectionTitle=sec.path,
    )
    return children, composite
