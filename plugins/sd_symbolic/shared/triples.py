"""Extract one (subject, relation, object) triple of the DS005 relation set from a sentence's surface form.

Only main-clause facts are taken: the subject must be the short noun phrase that opens the sentence.
Deliberate rejections (a wrong fact is worse than a missing one, since kb-thinkingdb chains them):
- relations inside subordinate or relative clauses ("When the cache uses Redis, ...", "The app that uses
  Redis is fast", "The service, which uses Redis, ...") give no triple;
- negated or hedged statements ("X does not use Y", "X may use Y", "X never uses Y") give no triple;
- pronoun or demonstrative subjects ("It uses Y", "This approach uses Y") give no triple, since they
  cannot be resolved without coreference;
- subjects over 7 words and objects over 8 words give no triple.
Names are normalised by dropping leading determiners, emphasis and trailing punctuation; their casing is
kept (compare them case-insensitively with `norm_key`).
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS

_BE = r"(?:is|are|was|were)"
_RELATION_FORMS: tuple[tuple[str, str], ...] = (
    (
        "part_of",
        rf"{_BE} (?:an? |the |one )?(?:\w+ )?(?:part|component|member|subset|element|module|section|piece) of"
        r"|belongs? to|belonged to|(?:is|are) (?:contained|included) in",
    ),
    (
        "has_capability",
        r"(?:has|have|had) (?:the )?(?:capability|ability|capacity|power) (?:to|of)"
        rf"|{_BE} (?:capable of|able to)|can(?!not\b|'t\b| not\b| be\b| only\b)",
    ),
    (
        "relevant_for",
        rf"{_BE} (?:highly |very |particularly |especially |directly |also )?"
        r"(?:relevant|important|essential|critical|crucial|useful|necessary|vital|key) (?:for|to)"
        r"|matters? (?:for|to)|mattered (?:for|to)",
    ),
    ("about", rf"{_BE} (?:all |mainly |mostly |primarily )?about|concerns|deals with|dealt with"),
    (
        "depends_on",
        r"depends? (?:up)?on|depended (?:up)?on|reli(?:es|ed) (?:up)?on|rely (?:up)?on|requires?|required"
        rf"|needs(?! to\b)|{_BE} (?:based|built) on",
    ),
    (
        "instance_of",
        rf"{_BE} an?(?: (?:kind|type|sort|form|instance|example|variant|class) of(?: an?| the)?)?",
    ),
    (
        "uses",
        r"uses|use|used|utili[sz]es|utili[sz]e|utili[sz]ed|employs|employ|employed|leverages?|leveraged"
        r"|makes? use of|made use of",
    ),
    ("provides", r"provides?|provided|offers?|offered|supplies|supply|supplied|delivers?|delivered|exposes?"),
    ("supports", r"supports?|supported|enables?|enabled"),
    (
        "causes",
        r"causes?|caused|leads? to|led to|triggers?|triggered|results? in|resulted in|gives? rise to|gave rise to",
    ),
    ("mentions", r"mentions?|mentioned|cites?|cited"),
)
_RELATION_RE = lazy_pattern(
    r"(?<=\S)\s+(?:" + "|".join(f"(?P<{name}>{form})" for name, form in _RELATION_FORMS) + r")\s+(?=\S)",
    re.IGNORECASE,
)

# The first word of every relation form: a sentence without one in its head has no triple.
_TRIGGERS = word_set(
    """is are was were belongs belong belonged has have had can matters matter mattered concerns deals
    dealt depends depend depended relies relied rely requires require required needs uses use used
    utilizes utilize utilized utilises utilise utilised employs employ employed leverages leverage
    leveraged makes make made provides provide provided offers offer offered supplies supply supplied
    delivers deliver delivered exposes expose supports support supported enables enable enabled causes
    cause caused leads lead led triggers trigger triggered results result resulted gives give gave
    mentions mention mentioned cites cite cited"""
)
_HEAD_WORDS = lazy_pattern(r"(?:\S+\s+){0,8}")
_LEADING = lazy_pattern(r"^(?:[-*+•>#]+\s*|\d{1,3}[.)]\s+|[*_`\"'“‘(\[]+)+")
_DETERMINERS = word_set(
    "the a an its their his her our your my some any each every all both this that these those"
)
_SUBJECT_STARTS_REJECT = word_set(
    """if when whenever because although though while since as after before unless until once whether where
    so but and or then also however thus therefore hence it he she they we you i this that these those
    there here which who what one its his her their such only"""
)
_SUBJECT_WORDS_REJECT = word_set(
    """not never no n't does do did doesn't don't didn't will would may might should could must shall can
    cannot won't to that which who whom whose where when if because also often usually"""
)
_TRAILING_ADVERBS = word_set(
    """also often usually typically generally mainly primarily mostly largely still directly indirectly now
    then really actually always sometimes frequently currently already further heavily only"""
)
_OBJECT_CUT = lazy_pattern(
    r"\s*(?:[,;:!?()\[\]—–]|\s-\s|\.(?=\s|$)|\b(?:which|that|who|whom|whose|where|when|while|because|although"
    r"|though|since|unless|if|so that|so|but|whereas|until|as well as|rather than|instead of|thereby|thus)\b)",
    re.IGNORECASE,
)
_ADJUNCT_CUT = lazy_pattern(
    r"\s+(?:for|to|in|on|at|by|with|during|through|via|from|into|within|without|across|under|over|after|before"
    r"|against|among|between|using|throughout|toward|towards|onto|upon|except)\b",
    re.IGNORECASE,
)
_AND_CLAUSE = lazy_pattern(
    r"\s+(?:and|or)\s+(?:then|also|it|they|he|she|we|you|so|thus|therefore|is|are|was|were|has|have|had|can|will"
    r"|would|could|should|must|may|might)\b",
    re.IGNORECASE,
)
_OBJECT_REJECT_FIRST = word_set(
    "not no never be been being only also of in on at to for by with from as than"
)
_TRIM_CHARS = " \t\n\"'“”‘’*_`.,;:!?)([]"


class Triple(msgspec.Struct, frozen=True):
    subject: str
    relation: str
    object: str
    confidence: float


def norm_key(name: str) -> str:
    """The case-insensitive comparison key of a normalised name."""
    return " ".join(name.lower().split())


def normalize_name(phrase: str) -> str:
    """Drop leading determiners, emphasis, quotes and trailing punctuation; keep the casing."""
    words = phrase.replace("**", "").replace("`", "").strip(_TRIM_CHARS).split()
    while words and words[0].lower().strip(_TRIM_CHARS) in _DETERMINERS:
        words.pop(0)
    cleaned = " ".join(w.strip('"“”‘’*_`') or w for w in words)
    cleaned = cleaned.strip(_TRIM_CHARS)
    return cleaned[:-2] if cleaned.endswith(("'s", "’s")) and " " not in cleaned else cleaned


def _subject(raw: str) -> tuple[str, bool] | None:
    """The normalised subject and whether trailing adverbs were dropped, or None if unusable."""
    raw = _LEADING.sub("", raw.strip())
    if not raw or any(c in raw for c in ",;:—–()[]") or " - " in raw:
        return None
    words = raw.split()
    dropped = False
    while words and words[-1].lower() in _TRAILING_ADVERBS:
        words.pop()
        dropped = True
    if not words or len(words) > 7:
        return None
    lowered = [w.lower().strip(_TRIM_CHARS) for w in words]
    if lowered[0] in _SUBJECT_STARTS_REJECT or any(w in _SUBJECT_WORDS_REJECT for w in lowered):
        return None
    if lowered[-1] in STOPWORDS or lowered[-1] in _DETERMINERS:
        return None
    name = normalize_name(" ".join(words))
    if not name or not any(c.isalpha() for c in name):
        return None
    return name, dropped


def _object(raw: str, relation: str) -> tuple[str, bool] | None:
    """The normalised object and whether anything after it was cut, or None if unusable."""
    text = raw.strip()
    cut = _OBJECT_CUT.search(text)
    tail_cut = False
    if cut:
        tail_cut = any(c.isalnum() for c in text[cut.start() :])
        text = text[: cut.start()]
    clause = _AND_CLAUSE.search(text)
    if clause:
        text = text[: clause.start()]
        tail_cut = True
    if relation != "has_capability":
        adj = _ADJUNCT_CUT.search(text)
        if adj and adj.start() > 0:
            text = text[: adj.start()]
            tail_cut = True
    words = text.split()
    if not words:
        return None
    if words[0].lower() in _OBJECT_REJECT_FIRST:
        return None
    if len(words) > 8:
        return None
    name = normalize_name(text)
    if not name or not any(c.isalpha() for c in name):
        return None
    last = name.split()[-1].lower()
    if last in STOPWORDS or last in _DETERMINERS:
        return None
    return name, tail_cut


def extract_triple(sentence: str) -> Triple | None:
    """The first main-clause triple of a sentence, or None."""
    text = sentence.strip()
    if len(text) < 5 or len(text) > 400 or text.endswith("?"):
        return None
    # the subject is at most 7 words, so the relation starts within the first 8: search only that far
    if _TRIGGERS.isdisjoint(" ".join(text.split(None, 9)[1:9]).lower().split()):
        return None
    head = _HEAD_WORDS.match(text)
    limit = min(len(text), (head.end() if head else 0) + 48)
    for m in _RELATION_RE.finditer(text, 0, limit):
        relation = m.lastgroup
        if relation is None:
            continue
        subj = _subject(text[: m.start()])
        if subj is None:
            # every later match has this one inside its subject, so it would be rejected too
            return None
        obj = _object(text[m.end() :], relation)
        if obj is None:
            continue
        subject, adverb = subj
        obj_name, tail_cut = obj
        return Triple(subject, relation, obj_name, _confidence(subject, obj_name, adverb, tail_cut))
    return None


def _confidence(subject: str, obj: str, adverb: bool, tail_cut: bool) -> float:
    """0.9 for a short exact "X rel Y." sentence; 0.6-0.8 when the fact was cut out of a longer one."""
    short = len(subject.split()) <= 4 and len(obj.split()) <= 4
    if short and not adverb and not tail_cut:
        return 0.9
    score = 0.8
    if tail_cut:
        score -= 0.1
    if not short or adverb:
        score -= 0.1
    return round(max(0.6, score), 2)
