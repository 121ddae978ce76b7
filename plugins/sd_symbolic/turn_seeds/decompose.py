"""detectSeeds in `decompose` mode (turn_seeds/intents.py): one intent becomes sub-intents for a child
frame — one per compared side or alternative, per link of a cause-effect chain, per coordinated aspect
or entity, else per separate request it holds; nothing sound to split leaves it unchanged.
Entry: `decompose_intent`.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_types import expected_type
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS
from mrpvm.protocol.document import IntentGroup
from mrpvm.protocol.envelope import DetectSeedsPayload

from ..shared.topics import entities, key_phrases
from .acts import WH, criterion_for, detect_act, evidence_for, is_yes_no
from .detect import SeedOutcome, detect_intents
from .turn import clean_lead, ensure_end, has_pronoun, looks_like_request, sentence_case, split_turn

_COMPARE_SIDES = lazy_pattern(
    r"^(?:compare|contrast)\s+(?:(?P<aspect>the\s+.+?|\w+(?:\s+and\s+\w+)?)\s+(?:of|between|for)\s+)?(?P<sides>.+)$"
    r"|\bdifferences?\s+between\s+(?P<sides2>.+)$"
    r"|\bhow\s+(?:does|do|did|is|are)\s+(?P<a>.+?)\s+(?:differ|different)\s+from\s+(?P<b>.+)$",
    re.IGNORECASE,
)
_SIDE_SPLIT = lazy_pattern(r"\s*,\s*(?:and\s+)?|\s+(?:and|versus|vs\.?|or|with)\s+", re.IGNORECASE)
_ASPECTS = lazy_pattern(
    r"\b(?P<det>the|what|which|their|his|her|its)\s+(?P<a>\w+(?:\s+\w+)?)\s+and\s+(?P<b>\w+)"
    r"\s+(?P<rest>(?:of|made|make|makes|that|did|does|do|are|were|is|was|for|behind|led)\b.*)$",
    re.IGNORECASE,
)


_CHAIN = lazy_pattern(
    r"\b(?:links?|linked|connects?|connected|leads?|led)\s+(?:from\s+)?(?P<x>(?:the\s+)?\w.+?)\s+(?:to|with)\s+"
    r"(?P<y>(?:the\s+)?\w.+)$"
    r"|\b(?:how|why|whether)\s+(?P<x3>.+?)\s+(?:led|leads|lead|caused|causes|cause|resulted\s+in|results\s+in"
    r"|triggered|triggers)\s+(?:to\s+)?(?P<y3>.+)$",
    re.IGNORECASE,
)
# "from X to Y" is a cause-effect chain only when the question says it is about causes or a sequence.
_FROM_TO = lazy_pattern(r"\bfrom\s+(?P<x>(?:the|a|an)\s+.+?)\s+to\s+(?P<y>(?:the|a|an)\s+.+)$", re.IGNORECASE)
_CAUSAL_CUE = lazy_pattern(
    r"\b(?:cause|causes|caused|effect|effects|chain|consequences?|sequence|led|lead|leads|result|resulted|trigger"
    r"|triggered|steps?)\b",
    re.IGNORECASE,
)
_ALTERNATIVE = lazy_pattern(r"\s+(?:instead\s+of|rather\s+than)\s+", re.IGNORECASE)
# Predicates that hold between the coordinated things together: splitting them would change the question.
_RELATIONAL = lazy_pattern(
    r"\b(?:between|together|both|common|each other|one another|differ\w*|differences?|similar\w*|compare\w*"
    r"|contrast\w*|versus|vs|relationship|relate\w*|interact\w*|combined|jointly|same)\b",
    re.IGNORECASE,
)
_FUNCTION = r"(?!(?:of|in|on|at|for|with|by|from|to|and|or|but|is|are|was|were|do|does|did|have|has|that|which|who)\b)"
_NP = rf"(?:(?:the|a|an|their|its|his|her)\s+)?{_FUNCTION}[\w.'’-]+(?:\s+{_FUNCTION}(?!(?:the|a|an)\b)[\w.'’-]+){{0,3}}?"
_COORDINATED = lazy_pattern(
    rf"(?P<items>(?:{_NP})(?:\s*,\s*(?:{_NP}))*,?\s+and\s+(?:{_NP}))(?=\s*(?:[?.!,;:]|$|\s(?P<next>[a-z]\w*)))"
)
_AUX_WORDS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
        "must",
    ]
)
_PLURAL_AUX = {"are": "is", "were": "was", "have": "has", "do": "does"}


def _sub_intent(index: int, text: str) -> IntentGroup:
    act, _ = detect_act(text)
    focus = key_phrases(text)
    return IntentGroup(
        index=index,
        act=act,
        intent=text,
        context="; ".join(focus) or text,
        criterion=criterion_for(act, focus),
        evidence=evidence_for(act, focus),
        output="brief" if act == "identify" else "paragraph",
        answerType=expected_type(text),
    )


def _split_subjects(text: str, act: str) -> list[str]:
    """Sub-questions of one intent, each a whole question or task: one per compared side or alternative
    ("X instead of Y"), one per link of a cause-effect chain, one per coordinated aspect ("the skills and
    tools that …") or coordinated entity ("… of the R5 and the X9"). Nothing sound to split: no sub-questions.
    """
    body = text.rstrip(" .?!")
    requests = _requests(text)
    m = _COMPARE_SIDES.search(requests[0].rstrip(" .?!") if requests else body)
    if act == "compare" and m:
        sides_text = m.group("sides") or m.group("sides2")
        sides = (
            [s for s in _SIDE_SPLIT.split(sides_text) if s.strip()]
            if sides_text
            else [m.group("a"), m.group("b")]
        )
        aspect = (m.group("aspect") or "").strip() if sides_text else ""
        if len(sides) >= 2:
            return [f"Describe {aspect + ' of ' if aspect else ''}{side.strip()}." for side in sides[:4]]
    alternatives = _alternatives(body)
    if alternatives:
        return [f"Describe {side}." for side in alternatives]
    if act in ("explain", "describe"):
        cm = _CHAIN.search(body)
        if cm and cm.group("x3"):
            return [f"What were the effects of {cm.group('x3')}?", f"What caused {cm.group('y3')}?"]
        link = cm or (_FROM_TO.search(body) if _CAUSAL_CUE.search(body) else None)
        if link:  # "links X to Y", or "from X to Y" said of causes: what followed X, what led to Y
            return [f"What happened after {link.group('x')}?", f"What led to {link.group('y')}?"]
    am = _ASPECTS.search(body)
    if am and not {w.lower() for w in (am.group("a") + " " + am.group("b")).split()} & _AUX_WORDS:
        question = bool(WH.match(body))
        end = "?" if question else "."
        prefix = body[: am.start()]
        return [
            sentence_case(f"{prefix}{am.group('det')} {part} {am.group('rest')}") + end
            for part in (am.group("a"), am.group("b"))
        ]
    return _coordinated(text)


def _alternatives(body: str) -> list[str]:
    """'… Vex had found the obelisk instead of Dr. Elara Vance …' → the two alternatives (names when the
    second one is a name, else the noun phrases on either side)."""
    m = _ALTERNATIVE.search(body)
    if not m:
        return []
    before, after = body[: m.start()], body[m.end() :]
    after = re.split(r"[,;:?!]|\.(?!\s*[A-Z])", after, maxsplit=1)[0]
    right = [p for p, _ in entities(after)]
    if right and after.lstrip().startswith(right[0].split()[0]):
        clause = re.split(r"[,;:?!]|\.(?!\s*[A-Z])", before)[-1]
        left = [p for p, _ in entities(clause)]
        if left and left[-1] != right[0]:
            return [left[-1], right[0]]
        return []
    b = _noun_phrase(after.split(), from_start=True)
    a = _noun_phrase(before.split(), from_start=False)
    return [a, b] if a and b and a.lower() != b.lower() else []


def _noun_phrase(toks: list[str], from_start: bool) -> str:
    """A short noun phrase at the start (or end) of a word list: up to three words, determiners dropped."""
    stop = STOPWORDS
    if from_start:
        while toks and toks[0].lower() in ("the", "a", "an"):
            toks = toks[1:]
        out: list[str] = []
        for w in toks[:3]:
            if w.lower() in stop:
                break
            out.append(w)
        return " ".join(out)
    tail = toks[-4:]
    for k in range(len(tail) - 1, -1, -1):
        if tail[k].lower() in ("the", "a", "an", "their", "its", "his", "her", "this", "that"):
            return " ".join(tail[k + 1 :])
    return " ".join(tail[-1:]) if tail and tail[-1].lower() not in stop else ""


def _coordinated(text: str) -> list[str]:
    """'What are the prices of the R5 and the X9?' → one question per coordinated noun phrase, when the
    predicate does not relate them to each other and the phrases read as one kind (all names, or all
    opened by a determiner). An auxiliary before a coordinated subject agrees with one item ("do X and Y
    cost" → "does X cost"); a coordinated subject followed by a bare verb is left alone."""
    if _RELATIONAL.search(text):
        return []
    first = re.match(r"\s*\S+\s+", text)  # the question word or task verb opens the turn: not an item
    starts = [w.start() for w in re.finditer(r"\b\w", text) if first is None or w.start() >= first.end()]
    for start in starts:
        m = _COORDINATED.match(text, start)
        if m is None:
            continue
        items = [i.strip() for i in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m.group("items")) if i.strip()]
        if len(items) < 2 or len(items) > 4:
            continue
        named = all(i[:1].isupper() or i.split()[0].lower() in ("the", "a", "an") for i in items)
        if not named or any(i.split()[0].lower() in STOPWORDS - {"the", "a", "an"} for i in items):
            continue
        before = text[: m.start()].rstrip()
        prev = before.split()[-1].lower() if before.split() else ""
        nxt = (m.group("next") or "").lower()
        subject = prev in _PLURAL_AUX
        if not subject and nxt and nxt not in STOPWORDS and m.group("next")[:1].islower():
            continue  # "the Tokyo office and the Berlin office handle …": a subject with a plural verb
        out = []
        for item in items:
            head = before[: len(before) - len(prev)] + _PLURAL_AUX[prev] if subject else before
            question = text.rstrip().endswith("?")
            out.append(ensure_end(sentence_case(f"{head} {item}{text[m.end() :]}".strip()), question))
        return out
    return []


def _requests(text: str) -> list[str]:
    """The separate requests (questions and tasks) one intent text holds, each as a whole sentence."""
    out = []
    for span in split_turn(text):
        raw = text[span.start : span.end]
        lead = clean_lead(raw)
        if any(c.isalnum() for c in lead) and looks_like_request(raw):
            out.append(ensure_end(sentence_case(lead), bool(WH.match(lead) or is_yes_no(lead))))
    return out


def decompose_intent(prompt: str, payload: DetectSeedsPayload, turn_id: str, created_at: str) -> SeedOutcome:
    first = detect_intents(
        prompt, DetectSeedsPayload(turnId=turn_id, history=payload.history), turn_id, created_at
    )
    if len(first.intents) >= 2:
        first.notes = "decomposed into the turn's separate questions"
        return first
    parent = first.intents[0]
    given = payload.parentIntent
    if given is not None:  # the parent frame's reading wins: its act, its Output, its context
        parent.act, parent.output = given.act, given.output
        parent.context = "; ".join(
            dict.fromkeys(p for p in (given.context + "; " + parent.context).split("; ") if p)
        )
    subs = _split_subjects(parent.intent, parent.act)
    if len(subs) < 2:  # an intent that holds several requests ("Analyze X. What made him …?") splits there
        subs = _requests(parent.intent)
    subs = [t for t in subs if t.rstrip("?.").lower() != parent.intent.rstrip("?.").lower()]
    if len(subs) < 2:  # nothing sound to split: the intent unchanged
        parent.index = 1
        return SeedOutcome([parent], first.units, first.confidence, "nothing to split: the intent unchanged")
    intents = [_sub_intent(i, sub) for i, sub in enumerate(subs, 1)]
    inherited = [p for p, _ in entities(parent.context)]
    for sub in intents:
        if has_pronoun(sub.intent) and not entities(sub.intent):
            sub.context = "; ".join(dict.fromkeys([*sub.context.split("; "), *inherited]))
    act = parent.act
    parent.index = len(intents) + 1
    intents.append(parent)
    note = f"decomposed {act} intent into {len(intents) - 1} sub-intents plus the original"
    return SeedOutcome(intents, first.units, first.confidence, note)
