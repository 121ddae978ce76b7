"""Short noun phrases that name what a text is about: named entities, quoted terms, content-word runs."""

from __future__ import annotations

from functools import lru_cache

from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS

_CAP_WORD = r"(?:[A-Z][\w'’\-]*\w|[A-Z])(?:\.(?=\s[A-Z]))?"
_ENTITY = lazy_pattern(rf"{_CAP_WORD}(?:\s+(?:(?:of|de|del|da|von|van|der)\s+(?:the\s+)?)?{_CAP_WORD})*")
_QUOTED = lazy_pattern(r"[\"“«]([^\"”»\n]{2,60})[\"”»]|`([^`\n]{1,60})`")
_RUN_WORD = lazy_pattern(r"[A-Za-z0-9][\w'’\-]*")
_SENTENCE_OPENERS = word_set(
    """the a an this that these those in on at for from with by to of as if when while after before during
    however but and or so then also thus therefore hence yet still although though because since once
    here there it its he she they we you i my our your his her their what which who whom whose where why
    how is are was were do does did can could would should will may might must shall not no yes please
    note first second third next finally lastly today later meanwhile suddenly without within each every
    all some many most such other another both either neither unlike whereas despite like instead rather
    usually typically generally often sometimes key important note warning tip example even just only
    overall ultimately eventually initially"""
)
# Question/instruction words that are never the topic of an intent.
_QUERY_NOISE = word_set(
    """explain describe compare define identify name list tell give show summarize summarise outline
    discuss analyze analyse evaluate assess verify check confirm diagnose recommend suggest implement
    construct write provide answer respond detail details detailed briefly brief word words single yes
    please difference differences between versus vs happen happened happens mean means meaning kind type
    way ways know want like need use make makes made get gets also really actually exactly specific
    specifically ground grounded reasoning reason reasons step steps question questions whose whom
    whereby wherein led lead leads caused cause causes linked links link"""
)
_POSSESSIVE = lazy_pattern(r"['’]s$")


def _clean_entity(phrase: str) -> str:
    phrase = _POSSESSIVE.sub("", phrase.strip())
    return phrase.rstrip(".")


def entities(text: str) -> list[tuple[str, bool]]:
    """Capitalised phrases with a flag telling whether they open a sentence (weaker evidence)."""
    return list(_entities(text))


@lru_cache(maxsize=4096)  # a group's topic reads each of its sentences again alone (tree.py _group_topic)
def _entities(text: str) -> tuple[tuple[str, bool], ...]:
    out: list[tuple[str, bool]] = []
    for m in _ENTITY.finditer(text):
        phrase = m.group(0)
        start = m.start()
        j = start - 1
        while j >= 0 and text[j] in " \t\"'“‘([*_":
            j -= 1
        initial = j < 0 or text[j] in ".!?:\n"
        words = phrase.split()
        while words and (
            words[0].lower() in _SENTENCE_OPENERS or (initial and words[0].lower() in _QUERY_NOISE)
        ):
            words.pop(0)
            initial = False
        if not words:
            continue
        phrase = _clean_entity(" ".join(words))
        if len(phrase) < 2 or phrase.lower() in STOPWORDS:
            continue
        out.append((phrase, initial))
    return tuple(out)


def quoted_terms(text: str) -> list[str]:
    return [(m.group(1) or m.group(2)).strip(" .,;:") for m in _QUOTED.finditer(text)]


_RUN_BREAK = lazy_pattern(r'[,.;:!?()"“”\[\]]')


def content_runs(
    text: str, max_words: int = 3, noise: frozenset[str] = frozenset(), limit: int = 0
) -> list[str]:
    """Runs of consecutive content words ("neural implants", "secure execution"), at most max_words long;
    with `limit`, only the first `limit` of them (a topic takes the first run of a long claim)."""
    runs: list[str] = []
    current: list[str] = []
    last_end = 0
    breaks = _RUN_BREAK.search
    for m in _RUN_WORD.finditer(text):
        if limit and len(runs) >= limit:
            return runs[:limit]
        word = _POSSESSIVE.sub("", m.group(0))
        low = word.lower()
        if current and breaks(text, last_end, m.start()):
            runs.append(" ".join(current))
            current = []
        last_end = m.end()
        if low in STOPWORDS or low in noise or len(low) < 2:
            if current:
                runs.append(" ".join(current))
                current = []
            continue
        current.append(word)
        if len(current) >= max_words:
            runs.append(" ".join(current))
            current = []
    if current:
        runs.append(" ".join(current))
    return runs[:limit] if limit else runs


def topic_of(texts: list[str], fallback: str = "") -> str:
    """The main subject of a group of sentences: the most frequent named entity, else the first content run."""
    weights: dict[str, float] = {}
    forms: dict[str, str] = {}
    order: dict[str, int] = {}
    for text in texts:
        for phrase, initial in entities(text):
            key = phrase.lower()
            weights[key] = weights.get(key, 0.0) + (0.6 if initial else 1.0)
            forms.setdefault(key, phrase)
            order.setdefault(key, len(order))
    if weights:
        joined = " ".join(texts).lower()
        for key in list(weights):
            # a lone capitalised word that opens a sentence and never recurs is usually just a sentence opener
            if weights[key] < 1.0 and " " not in key and joined.count(key.rstrip("s")) < 2:
                del weights[key]
    if weights:
        best = max(weights, key=lambda k: (weights[k], len(k.split()) > 1, -order[k]))
        return _shorten(forms[best])
    for text in texts:
        runs = content_runs(text, noise=_SENTENCE_OPENERS, limit=1)
        if runs:
            return _shorten(runs[0])
    return fallback or _shorten(" ".join(texts)[:60])


def key_phrases(text: str, limit: int = 10) -> list[str]:
    """Entities, quoted terms and content runs of a question, most specific first, without duplicates."""
    seen: set[str] = set()
    out: list[str] = []

    def add(phrase: str) -> None:
        phrase = phrase.strip(" .,;:!?\"'“”‘’")
        key = phrase.lower()
        if not phrase or key in seen or key in STOPWORDS or key in _QUERY_NOISE:
            return
        seen.add(key)
        out.append(phrase)

    for q in quoted_terms(text):
        add(q)
    for phrase, _initial in entities(text):
        if phrase.lower() not in _QUERY_NOISE:
            add(phrase)
    entity_words = {w.lower().strip(".") for p in out for w in p.split()}
    for run in content_runs(text, max_words=3, noise=_QUERY_NOISE):
        part: list[str] = []
        for w in [*run.split(), ""]:
            if w and w.lower() not in entity_words:
                part.append(w)
            elif part:
                add(" ".join(part))
                part = []
    return out[:limit]


def _shorten(phrase: str, max_words: int = 6) -> str:
    words = phrase.split()
    return " ".join(words[:max_words]).strip(" .,;:")
