"""The response: per-seed outcomes, the response document (groups) and its Markdown (DS017 outline).

One group per question (seed) of the root frame. A group records its act, intent, status, answer,
the sources it used split by origin (KB, committed session, current turn) and warnings. A seed
answered through a child frame keeps its sub-answers as `subgroups`.
"""

from __future__ import annotations

import msgspec
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import OutcomeStatus
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

from ..trace import clip
from .views import confidence_rank

# Group statuses, best first. `partial`: a decomposed seed whose sub-answers are only partly successful.
STATUS_RANK = {"success": 5, "partial": 4, "no-context": 3, "rejected": 2, "failed": 0}
EXCERPT = 240


class SeedOutcome(msgspec.Struct):
    """What resolving one seed produced: the accepted answer, or the best weak one."""

    intent: IntentGroup
    ref: str
    status: str
    frame_id: str
    answer: str = NO_CONTEXT_ANSWER
    sources: list[str] = msgspec.field(default_factory=list)
    evidence: list[KnowledgeUnit] = msgspec.field(default_factory=list)
    confidence: str | None = None
    kb_plugin: str | None = None
    gs_plugin: str | None = None
    validation: str = "none"
    warnings: list[str] = msgspec.field(default_factory=list)
    node_id: str | None = None
    seed_node: str | None = None
    children: list[SeedOutcome] = msgspec.field(default_factory=list)

    def rank(self) -> tuple[float, ...]:
        return (STATUS_RANK.get(self.status, 0), confidence_rank(self.confidence), len(self.sources))


class SourceRef(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    sourceName: str | None = None
    section: str = ""  # the heading the unit stands under in its source
    topic: str = ""
    role: str = ""
    excerpt: str = ""


class ResponseGroup(msgspec.Struct, kw_only=True):
    intentRef: str
    act: str
    intent: str
    status: str
    answerMarkdown: str
    kbSources: list[SourceRef] = []
    sessionSources: list[SourceRef] = []
    currentTurnContext: list[SourceRef] = []
    evidenceIds: list[str] = []  # every unit of the knowledge view the answer came from (cited or not)
    warnings: list[str] = []
    confidence: str | None = None
    validation: str = "none"
    plugins: dict[str, str] = {}
    frameId: str = ""
    subgroups: list[ResponseGroup] = []


class ResponseDocument(msgspec.Struct, kw_only=True):
    requestId: str
    sessionId: str
    status: str
    groups: list[ResponseGroup] = []
    warnings: list[str] = []
    # one line per plugin whose call failed in the turn: "kb-x failed retrieve: INVALID_CNL: line 9: [...] ..."
    pluginFailures: list[str] = []
    plugins: dict[str, str] = {}
    currentTurnUnits: int = 0
    llmCalls: int = 0
    durationMs: float = 0.0


def turn_status(outcomes: list[SeedOutcome] | None) -> OutcomeStatus:
    """success: every seed answered and accepted; failed: nothing answered; weak otherwise."""
    if outcomes is None:
        return "failed"
    if all(o.status == "success" for o in outcomes):
        return "success"
    if all(o.status == "failed" for o in outcomes):
        return "failed"
    return "weak"


def reported_status(status: str, groups: list[ResponseGroup]) -> str:
    """The turn's status as reported: `no-context` when every question of the turn was refused (the no-context
    sentence, for which `mrpvm ask` exits 3), so that a refusal does not read as a weak answer (README: a weak
    answer is an answer, exit 0); the frame's status otherwise (planners and the commit keep that one)."""
    refused = all(g.answerMarkdown.strip() in ("", NO_CONTEXT_ANSWER) for g in groups)
    return "no-context" if status == "weak" and groups and refused else status


def _ref(unit: KnowledgeUnit) -> SourceRef:
    return SourceRef(
        id=unit.id,
        sourceName=unit.sourceName or unit.sourceId,
        section=unit.heading,
        topic=unit.topic,
        role=unit.role,
        excerpt=clip(unit.body, EXCERPT),
    )


def build_group(
    outcome: SeedOutcome, origin: dict[str, str], lookup: dict[str, KnowledgeUnit]
) -> ResponseGroup:
    evidence = {u.id: u for u in outcome.evidence}
    # a refusal cites nothing: the units it looked at do not answer (listing them would read as an answer)
    refused = outcome.answer.strip() in ("", NO_CONTEXT_ANSWER)
    cited = [] if refused else (outcome.sources or list(evidence))
    kb, session = [], []
    for unit_id in dict.fromkeys(cited):
        unit = evidence.get(unit_id) or lookup.get(unit_id)
        ref = _ref(unit) if unit is not None else SourceRef(id=unit_id)
        where = origin.get(unit_id, "kb")
        if where == "session":
            session.append(ref)
        elif where == "kb":
            kb.append(ref)
    current = [] if refused else [_ref(u) for u in outcome.evidence if origin.get(u.id) == "current-turn"]
    plugins = {k: v for k, v in (("kb", outcome.kb_plugin), ("gs", outcome.gs_plugin)) if v}
    return ResponseGroup(
        intentRef=outcome.ref,
        act=outcome.intent.act,
        intent=outcome.intent.intent,
        status=outcome.status,
        answerMarkdown=outcome.answer,
        kbSources=kb,
        sessionSources=session,
        currentTurnContext=current,
        evidenceIds=[u.id for u in outcome.evidence],
        warnings=list(dict.fromkeys(outcome.warnings)),
        confidence=outcome.confidence,
        validation=outcome.validation,
        plugins=plugins,
        frameId=outcome.frame_id,
        subgroups=[build_group(c, origin, lookup) for c in outcome.children],
    )


def _line_text(line: str) -> str:
    return line[2:].strip() if line.startswith("- ") else line.strip()


def unrepeated(groups: list[ResponseGroup]) -> list[ResponseGroup]:
    """The groups with each list item that is a whole line of an earlier group's answer left out of later
    answers (a turn of two questions answered from one passage does not quote a sentence twice); an answer
    keeps its items when every one of them was said before. Lines are compared whole, never read."""
    said: set[str] = set()
    out: list[ResponseGroup] = []
    for group in groups:
        lines = group.answerMarkdown.split("\n")
        kept = [ln for ln in lines if not (ln.startswith("- ") and _line_text(ln) in said)]
        if len(kept) < len(lines) and any(ln.startswith("- ") for ln in kept):
            group = msgspec.structs.replace(group, answerMarkdown="\n".join(kept))
        said.update(_line_text(ln) for ln in lines if ln.strip())
        out.append(group)
    return out


# --------------------------------------------------------------------------- Markdown


def _bullets(refs: list[SourceRef]) -> list[str]:
    out = []
    for ref in refs:
        place = " › ".join(p for p in (ref.sourceName, ref.section) if p)
        where = f" ({place})" if place else ""
        topic = f" — {ref.topic}" if ref.topic and ref.topic != ref.section else ""
        out.append(f"- `{ref.id}`{where}{topic}")
    return out


def _all_sources(group: ResponseGroup) -> list[SourceRef]:
    refs = {r.id: r for r in (*group.currentTurnContext, *group.sessionSources, *group.kbSources)}
    for sub in group.subgroups:
        for ref in _all_sources(sub):
            refs.setdefault(ref.id, ref)
    return list(refs.values())


def group_markdown(group: ResponseGroup, number: int) -> str:
    lines = [f"## {number}. {group.intent}", ""]
    lines.append(f"- **Act:** {group.act}")
    lines.append(f"- **Intent:** {group.intent}")
    status = (
        group.status
        if group.validation in ("none", "unvalidated")
        else f"{group.status} ({group.validation})"
    )
    lines.append(f"- **Status:** {status}")
    for warning in group.warnings:
        lines.append(f"- **Warning:** {warning}")
    lines.append("")
    for title, refs in (
        ("Current Turn Context", group.currentTurnContext),
        ("Session Context", group.sessionSources),
        ("KB Context", group.kbSources),
    ):
        if refs:
            lines += [f"### {title}", "", *_bullets(refs), ""]
    lines += ["### Answer", "", group.answerMarkdown.strip() or NO_CONTEXT_ANSWER, ""]
    sources = _all_sources(group)
    lines += ["### Sources Used", "", *(_bullets(sources) or ["- none"]), ""]
    return "\n".join(lines)


def document_markdown(doc: ResponseDocument) -> str:
    parts = [f"> {line}" for line in (*doc.pluginFailures, *doc.warnings)]
    if parts:
        parts.append("")
    if not doc.groups:
        parts.append(
            f"Context recorded: {doc.currentTurnUnits} knowledge units from this turn; no question found."
        )
    for number, group in enumerate(doc.groups, 1):
        parts.append(group_markdown(group, number))
    return "\n".join(parts).rstrip() + "\n"


# --------------------------------------------------------------------------- answer-only Markdown

# The no-context answer as a person reads it (the protocol's sentence, NO_CONTEXT_ANSWER, speaks of
# "intents" and "persistent KB"; plugins and the response document keep that one).
REFUSAL_FOR_PEOPLE = "Your documents do not contain enough evidence to answer this question."

WEAK_NOTES = {
    "partial": "Only part of this question could be answered from the available knowledge.",
    "rejected": "This answer did not pass validation; treat it with caution.",
    "no-context": "This answer rests on weak evidence.",
    "failed": "This answer rests on weak evidence.",
}


def weak_note(group: ResponseGroup) -> str | None:
    """What a reader should know about a weak answer; None for a good one (or the no-context sentence,
    which says it itself)."""
    if group.status == "success" and group.validation != "rejected":
        return None
    if group.answerMarkdown.strip() in ("", NO_CONTEXT_ANSWER):
        return None
    return WEAK_NOTES.get(group.status, WEAK_NOTES["no-context"])


def _places(group: ResponseGroup) -> list[str]:
    """ "file › heading" of every KB or session source the answer cites (sub-answers included)."""
    out = [
        " › ".join(p for p in (ref.sourceName, ref.section) if p) or ref.id
        for ref in (*group.kbSources, *group.sessionSources)
    ]
    for sub in group.subgroups:
        out += _places(sub)
    return out


def answer_markdown(doc: ResponseDocument) -> str:
    """What a person reads (the OpenAI-compatible `content`): each intent's answer (a short heading per
    intent only when there are several), a note only when an answer is weak, then one compact "Sources"
    list ("Sources:" then file › heading lines). The full document stays in `document_markdown` and the response document."""
    if not doc.groups:
        return f"Noted: {doc.currentTurnUnits} knowledge units from this message; no question found.\n"
    several = len(doc.groups) > 1
    parts: list[str] = []
    for group in doc.groups:
        if several:
            parts.append(f"### {group.intent.strip().rstrip('?.!')}")
        answer = group.answerMarkdown.strip()
        parts.append(REFUSAL_FOR_PEOPLE if answer in ("", NO_CONTEXT_ANSWER) else answer)
        note = weak_note(group)
        if note:
            parts.append(f"*{note}*")
    if doc.status == "failed":
        parts += [f"*{w}*" for w in doc.warnings[:2]]
    if doc.pluginFailures:  # a plugin the user pinned, or the planner chose, broke: say which and why
        see = f"`mrpvm trace {doc.requestId}`"
        parts.append("\n".join(f"*Plugin {line} (details: {see})*" for line in doc.pluginFailures))
    places = list(dict.fromkeys(p for g in doc.groups for p in _places(g)))
    if places:
        parts.append("Sources:\n" + "\n".join(f"- {p}" for p in places))
    return "\n\n".join(parts).rstrip() + "\n"


def combine_children(parent: SeedOutcome, children: list[SeedOutcome]) -> None:
    """Fold a child frame's answers into the parent seed's outcome (answers as #### sub-sections)."""
    parent.children = children
    parent.warnings.extend(w for c in children for w in c.warnings if w not in parent.warnings)
    if not children:
        parent.status = "failed"
        parent.warnings.append("the decomposition produced no sub-intents")
        return
    statuses = [c.status for c in children]
    if all(s == "success" for s in statuses):
        parent.status = "success"
    elif any(s in ("success", "partial") for s in statuses):
        parent.status = "partial"
    else:
        parent.status = max(children, key=lambda c: c.rank()).status
    parent.answer = "\n\n".join(f"#### {c.intent.intent}\n\n{c.answer.strip()}" for c in children)
    parent.sources = list(dict.fromkeys(s for c in children for s in c.sources))
    parent.evidence = list({u.id: u for c in children for u in c.evidence}.values())
    ranks = [confidence_rank(c.confidence) for c in children]
    parent.confidence = (
        min(children, key=lambda c: confidence_rank(c.confidence)).confidence if ranks else None
    )
    parent.gs_plugin = "decomposition"
    parent.kb_plugin = next((c.kb_plugin for c in children if c.kb_plugin), None)
    validations = {c.validation for c in children}
    parent.validation = validations.pop() if len(validations) == 1 else "mixed"
