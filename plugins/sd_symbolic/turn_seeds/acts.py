"""DS004 act detection for one question or task, and what a good answer to it looks like.

Rules are checked in order; the first that matches wins. They read the question's form (yes/no
auxiliaries, wh-words, imperative act verbs), never its domain.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.protocol.vocab import ROLES_FOR_ACT

_I = re.IGNORECASE

POLITE = lazy_pattern(
    r"^(?:(?:please|kindly)\s+|(?:can|could|would|will) you(?: please)?\s+(?=\w)"
    r"|i(?:'d| would)? ?(?:want|need|like) to (?:know|understand|learn|find out)\s+|do you know\s+|i wonder\s+"
    r"|i(?:'d| would) like (?:you )?to\s+|i (?:want|need) (?:you )?to\s+|help me(?: to)?\s+(?=understand|know|see|find)"
    r"|let me know\s+|i(?:'m| am) (?:wondering|curious)\s+(?:about\s+)?"
    r"|(?:tell|show) me\s+(?=(?:who|what|which|where|when|why|how|whether|if)\b)"
    r"|(?:according to|based (?:only |solely )?on|from|in|using) (?:the|this|that|your) (?:text|document|story"
    r"|passage|article|source|context|manual|report|guide|notes?|evidence|information)s?,?\s+)+",
    _I,
)
_AUX = (
    r"is|are|was|were|am|do|does|did|can|could|would|will|should|shall|has|have|had|may|might|must|isn't|aren't"
    r"|wasn't|weren't|don't|doesn't|didn't|can't|couldn't|wouldn't|won't|shouldn't|hasn't|haven't|hadn't"
)
YES_NO = lazy_pattern(rf"^(?:{_AUX})\b", _I)
# "If X happened, would Y ...?" / "Given X, is Y ...?": a yes/no question behind a leading clause.
COND_YES_NO = lazy_pattern(
    rf"^(?:if|given|assuming|suppose|supposing|when|after|during|in)\b[^?]*?,\s*(?:{_AUX})\b", _I
)
WH = lazy_pattern(r"^(?:what|which|who|whom|whose|where|when|why|how)\b", _I)

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "diagnose",
        lazy_pattern(
            r"\b(?:diagnose|troubleshoot|debug|what(?:'s| is) wrong|root cause)\b"
            r"|\bwhy (?:does|do|is|are|won't|doesn't|can't|isn't|aren't|would|might)\b.*\b(?:fail|fails|failing|crash\w*"
            r"|error\w*|break|breaks|broken|hang|hangs|not work\w*|slow|stuck|refuse\w*|reject\w*)\b"
            r"|\b(?:fix|resolve|solve)\b.*\b(?:error|exception|crash|failure|bug|issue|problem)\b"
            r"|\b(?:error|exception|crash(?:es)?|not working|stopped working|keeps failing|won't start)\b",
            _I,
        ),
    ),
    (
        "verify",
        lazy_pattern(
            r"^(?:verify|check|confirm|validate|make sure|ensure|prove|double-check)\b"
            r"|^is it (?:true|correct|right|accurate) (?:that|to say)\b|\btrue or false\b|\bfact-?check\b",
            _I,
        ),
    ),
    (
        "recommend",
        lazy_pattern(
            r"^(?:should|shall) (?:i|we)\b|\b(?:when|which|what|where) should (?:i|we)\b|\b(?:recommend|suggest|advise|advice)\b|\bwhat should (?:i|we)\b"
            r"|\b(?:which|what) (?:\w+ )?(?:is|would be) (?:the )?(?:best|better|most suitable|preferable|ideal)\b"
            r"|\bis it (?:better|wise|advisable|worth it) to\b|\bbest (?:way|option|choice|approach|practice)s?\b",
            _I,
        ),
    ),
    ("evaluate", lazy_pattern(rf"^(?:{_AUX})\b|^(?:evaluate|assess|judge|rate)\b|^whether\b", _I)),
    (
        "compare",
        lazy_pattern(
            r"\b(?:compare|comparison|contrast|versus|vs\.?|differ|differs|difference|differences|distinguish"
            r"|similarities|similar to|pros and cons|trade-?offs?)\b|\b(?:better|worse|faster|slower) than\b"
            r"|^which (?:is|was|are|one is) (?:better|worse|faster|larger|smaller|more|less)\b",
            _I,
        ),
    ),
    (
        "implement",
        lazy_pattern(
            r"^how (?:do|can|should|would|could) (?:i|we|you|one)\b(?! (?:know|tell|explain))|^how to\b"
            r"|\b(?:steps|instructions) (?:to|for)\b|^(?:implement|write|build|create|set up|setup|configure|install"
            r"|deploy|code|program|make|develop|design|generate|add|run|migrate|upgrade|convert)\b"
            r"|\bwalk me through\b|\bwhat (?:are|is) the (?:steps|procedure|process) (?:to|for)\b",
            _I,
        ),
    ),
    (
        "identify",
        lazy_pattern(
            r"^(?:which|who|whom|whose|where|when)\b|^(?:in|at|on|for|from|by|with|to|during) (?:which|what|whom|whose)\b|^name\b|\bname (?:the|a|an|one|two|three|all|some|each)\b"
            r"|\bwhat (?:is|was|are|were) the (?:name|names|title|date|year|number|amount|cost|price|size)\b"
            r"|^what (?:year|time|date|day|month|color|colour|kind|type|sort|percentage|number|amount)\b"
            r"|^how (?:many|much|long|old|far|often|big|large|tall)\b|^(?:identify|list|enumerate|find|locate|pick|select)\b"
            r"|^what \w+ (?:did|does|do|was|were|is|are|has|have|had)\b"
            r"|^what(?:'s| is| was| are| were) the (?!(?:\w+ )?(?:purpose|role|meaning|significance|impact|effects?|causes?"
            r"|importance|reasons?|point|benefits?|advantages?|disadvantages?|consequences?)\b)\w+(?: \w+)? of\b",
            _I,
        ),
    ),
    (
        "define",
        lazy_pattern(
            r"^(?:define|definition of)\b|\bwhat does [^?]{1,60} (?:mean|stand for)\b|\bmeaning of\b"
            r"|\bwhat is meant by\b|^what(?:'s| is| are) (?!the\b)(?![^?]*\bof\b)(?:an? )?[\w\-' ]{1,40}\??$",
            _I,
        ),
    ),
    (
        "explain",
        lazy_pattern(
            r"^why\b|\bwhy\b|^(?:explain|analy[sz]e|justify|account for|interpret|reason)\b"
            r"|^how (?:does|do|did|is|are|was|were|can|could|would|will|has|have)\b|\bwhat (?:causes|caused|led to|leads to"
            r"|makes|made|explains|drives|drove)\b|\b(?:the )?reasons? (?:for|why|behind)\b|\bcause and effect\b"
            r"|\b(?:causes|effects?|consequences|impacts?|purpose|role) of\b|^how\b",
            _I,
        ),
    ),
    (
        "describe",
        lazy_pattern(
            r"^(?:describe|summari[sz]e|outline|overview|tell me about|tell me|give (?:me )?(?:an? )?(?:overview|summary"
            r"|description|account)|discuss|characteri[sz]e|narrate|recount|report)\b|\bwhat happened\b|\bwhat do(?:es)? "
            r"(?:\w+ )?know about\b|\bsummary of\b",
            _I,
        ),
    ),
)

CRITERIA = {
    "compare": "covers each side on the same aspects and states their differences and similarities",
    "explain": "gives the causes, reasons or mechanism, each grounded in the evidence",
    "recommend": "makes a justified recommendation and names the deciding criteria",
    "diagnose": "identifies the likely cause of the problem and a fix, grounded in the evidence",
    "implement": "gives the actionable steps in order, with their preconditions",
    "verify": "states whether the claim holds and cites the evidence that settles it",
    "define": "gives a precise definition and the distinguishing features",
    "evaluate": "gives a clear yes or no only when the evidence states it, and the supporting fact",
    "identify": "names the specific item asked for, supported by the evidence",
    "describe": "describes the main facts accurately and completely",
}


def strip_polite(text: str) -> str:
    """'Could you please explain X' -> 'explain X'."""
    return POLITE.sub("", text.strip(), count=1).strip()


def is_yes_no(text: str) -> bool:
    body = strip_polite(text)
    if body != text.strip():
        # "Can you tell me whether ..." is a request, not a yes/no question about the reader.
        return bool(YES_NO.match(body))
    return bool(YES_NO.match(body) or COND_YES_NO.match(body))


def detect_act(text: str) -> tuple[str, bool]:
    """(act, matched) for one cleaned question or task; matched is False when the default was used."""
    body = strip_polite(text)
    lowered = body.lower()
    if COND_YES_NO.match(lowered) and not re.search(
        r"\b(?:how|why|what|which|who)\b", lowered.split(",")[-1]
    ):
        return "evaluate", True
    for act, pattern in _RULES:
        if pattern.search(lowered):
            return act, True
    if lowered.startswith("what"):
        return "describe", False
    return "explain", False


def criterion_for(act: str, focus: list[str]) -> str:
    about = f" about {', '.join(focus[:3])}" if focus else ""
    return f"The answer {CRITERIA[act]}{about}."


def evidence_for(act: str, focus: list[str]) -> str:
    roles = ", ".join(ROLES_FOR_ACT[act])
    about = f"; mentioning {', '.join(focus[:4])}" if focus else ""
    return f"{roles} units{about}"
