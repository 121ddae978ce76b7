"""Whether a pronoun of a question refers inside the question, so a follow-up rewrite must leave it: English
binding read from word order, without a parser.

- A possessive ("its", "their") is bound by a noun phrase before it that agrees in number: "Must
  contributors use their legal names?", "Is the port fixed, or can its value change?".
- A plain pronoun ("it", "them") is not bound by the subject of its own clause ("Does the daemon restart
  it?": "it" is something else, Principle B) but by a noun phrase of a clause above it, a subordinator
  standing between them: "… a record for the nobody user if /etc/passwd does not list it?".
- An expletive "it" refers to nothing: "How long does it take for a fix to …", "Is it safe to …", "it seems
  that …".
"""

from __future__ import annotations

from mrpvm.plugins.sdk.lexicon import looks_plural, word_set
from mrpvm.plugins.sdk.patterns import EXPLETIVE_IT, lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS

_WORD = lazy_pattern(r"[A-Za-z0-9][\w'/.-]*")
_DETERMINERS = word_set("a an the this that these those each every any some no")
_AUXILIARIES = word_set(
    "is are was were do does did can could will would shall should must may might has have had"
)
_SUBORDINATORS = word_set("if when whenever unless because after before while once until whether")
_TECHNICAL = lazy_pattern(r"\w[/.-]\w")  # a path, a dotted or hyphenated name: etc/passwd, nss-systemd
_PLURAL_PRONOUNS = frozenset(["they", "their", "them"])
_POSSESSIVES = frozenset(["its", "their"])


def _noun_phrases(words: list[str]) -> list[tuple[int, bool]]:
    """(position, plural) of the noun phrases among `words`: a determiner's phrase (its last content word is
    the head), a technical term with a path or dotted part, the bare subject after an opening auxiliary."""
    found: list[tuple[int, bool]] = []
    lows = [w.lower() for w in words]
    for k, low in enumerate(lows):
        if low in _DETERMINERS:
            head = None
            for w in words[k + 1 : k + 4]:
                if w.lower() in STOPWORDS:
                    break
                head = w
            if head is not None:
                found.append((k, looks_plural(head)))
        elif _TECHNICAL.search(words[k]):
            found.append((k, False))
    opening = next((k for k, low in enumerate(lows) if low in _AUXILIARIES), None)
    if opening is not None and opening + 1 < len(words):
        subject = lows[opening + 1]
        if subject not in STOPWORDS and subject not in _DETERMINERS:
            found.append((opening + 1, looks_plural(words[opening + 1])))
    return found


def expletive(question: str, start: int) -> bool:
    """The "it" at `start` is an expletive subject ("How long does it take for …", "Is it safe to …")."""
    match = EXPLETIVE_IT.search(question, max(0, start - 4))
    return match is not None and match.start() <= start < match.end()


def bound_inside(question: str, start: int, pronoun: str) -> bool:
    """The pronoun at `start` takes its antecedent inside the question (see the module's rules)."""
    words = _WORD.findall(question[:start])
    plural = pronoun.lower() in _PLURAL_PRONOUNS
    phrases = [k for k, many in _noun_phrases(words) if many == plural]
    if pronoun.lower() in _POSSESSIVES:
        return bool(phrases)
    lows = [w.lower() for w in words]
    return any(any(w in _SUBORDINATORS for w in lows[k + 1 :]) for k in phrases)
