"""Yes/No to a question about a default ("Is compression turned on by default?", "Does it follow symlinks by
default?") from the sentence that states the asked setting's default, when no sentence states the proposition
in the question's words (polarity.verdict).

A reference states a boolean default in two ways:
- a value of the option's own entry: `Defaults to "no".`, `[default: yes]`, `The default is off.` under the
  option's line (`enable-cache=`): the value's truth is the answer, turned over when the question asks the
  negative ("Is X disabled by default?") or the option is named negatively (`disable-cache=`, `--no-cache`);
- a sentence that says what happens by default ("Children are not traced by default."): its polarity
  against the question's is the answer; one that restricts ("by default only the first one is read") is
  not read.

Among the sentences stating a default, the one closest in meaning to the question (MiniLM cosine, meaning.py;
an entry's value is as close as the closest sentence of its entry) answers, when it is close enough and carries enough of the question's words with its context (the heading it
stands under; an entry's value: the entry's other sentences too); another of the other polarity about as close: no answer. An entry's literal value
supports the answer; a prose sentence read by meaning is weak evidence (the caller reports it as such)."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .clauses import tokenize
from .context_terms import unit_context
from .evidence import Sentence
from .meaning import Meaning
from .polar_meaning import POLAR_TIE, clause_negated
from .polarity import PolarVerdict, proposition, proposition_terms

# a question about a default: "by default", "the default", "default to"
ASKS_DEFAULT = lazy_pattern(r"\bby\s+default\b|\bdefaults?\b", re.I)
# an entry's boolean default: `Defaults to "no"`, `default: yes`, `[default: off]`, `The default is false`
_LITERAL = lazy_pattern(
    r"\bdefault(?:s|ed)?(?:\s+(?:value\s+)?(?:is|to|setting\s+is))?\s*[:=]?\s*[\"'`\u201c]?"
    r"(yes|no|true|false|on|off|enabled|disabled)\b[\"'`\u201d]?",
    re.I,
)
_PROSE = lazy_pattern(r"\bby\s+default\b", re.I)
# "By default only the first process is traced": a restriction, whose polarity for the asked thing depends on
# whether it is the one named (not read)
_RESTRICTED = lazy_pattern(r"\b(?:only|solely|just|except)\b", re.I)
_TRUE = frozenset({"yes", "true", "on", "enabled"})
# words that ask whether something is off ("Is X disabled by default?"), or name an option that turns it off
_OFF = frozenset({"disable", "disabled", "disables", "off", "skip", "skipped", "suppress", "suppressed"})
_OFF_OPTION = lazy_pattern(r"(?:^|[\s`-])(?:no-|disable|skip|without)", re.I)

# the cosine a default's sentence (an entry: its closest sentence) needs to stand for the asked setting; the
# lexical share below is the guard against a setting the documents do not describe
DEFAULT_MEANING = 0.5
MIN_SUBJECT = 0.5  # weighted share of the question's words (without "default") it states with its context
# (an entry's value: with its entry's other sentences and heading)


def default_verdict(
    focus: str, pool: list[Sentence], meaning: Meaning | None, weights: dict[str, float], keys: set[str]
) -> tuple[PolarVerdict, bool] | None:
    """(the verdict, whether an entry's literal value states it) for a yes/no question about a default, or
    None when it asks no default or no sentence stating one stands for the asked setting."""
    if meaning is None or not ASKS_DEFAULT.search(focus):
        return None
    main = proposition(focus)
    prop = [t for t in proposition_terms(main, weights) if t != "default"]
    total = sum(weights[t] for t in prop)
    words = {t.low for t in tokenize(main)}
    asks_off = bool(words & _OFF)
    asked_negated = clause_negated(main, main)
    # an entry's value ("Defaults to "no".") means little alone: the entry stands for the setting it describes
    entry: dict[str, float] = {}
    said: dict[str, set[str]] = {}
    for s in pool:
        if s.code:
            continue
        said.setdefault(s.unit.id, set()).update(s.terms, s.carried, s.under, unit_context(s))
        if (c := meaning.of(s)) is not None:
            entry[s.unit.id] = max(c, entry.get(s.unit.id, c))
    found: list[tuple[float, Sentence, str, bool]] = []
    for s in pool:
        if s.code:
            continue
        literal = _LITERAL.search(s.text)
        if literal is None and not _PROSE.search(s.text):
            continue
        cosine = entry.get(s.unit.id) if literal is not None else meaning.of(s)
        if cosine is None or cosine < DEFAULT_MEANING:
            continue
        context = (
            said[s.unit.id] if literal is not None else set(s.terms) | s.carried | s.under | unit_context(s)
        )
        if not keys <= context:
            continue
        if total <= 0 or sum(weights[t] for t in prop if t in context) / total < MIN_SUBJECT:
            continue
        if literal is not None:
            on = literal.group(1).lower() in _TRUE
            off_option = bool(_OFF_OPTION.search(s.unit.heading or ""))
            yes = on ^ off_option ^ asks_off
        elif _RESTRICTED.search(s.text):
            continue
        else:
            yes = clause_negated(s.text, main) == asked_negated
        found.append((cosine, s, "Yes" if yes else "No", literal is not None))
    if not found:
        return None
    found.sort(key=lambda f: (-f[0], len(f[1].text)))
    cosine, best, answer, literal = found[0]
    if any(a != answer and c >= cosine - POLAR_TIE for c, _, a, _ in found[1:]):
        return None  # another default about as close says otherwise
    return PolarVerdict(answer, best, cosine), literal
