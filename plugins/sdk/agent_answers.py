"""Agents in questions and answers: a "who" question asks for an agent, which a personal name answers, and so
does a role or a group ("the maintainers", "a project", "the administrator", "anyone"); a question about
permission ("Who may …?", "Who is allowed to …?") is answered by the rule that grants it, and best by the one
that restricts it ("only if …").

Generic English only (answer-type classes HUM:individual and HUM:group of Li & Roth's question taxonomy): no
domain vocabulary.
"""

from __future__ import annotations

import re

from .answer_shapes import names_in
from .answer_types import asked_clause
from .lexicon import word_set
from .patterns import lazy_pattern
from .text import terms

# Nouns that name a person by role, a group of people or an institution (singular and plural as written).
ROLE_NOUNS = word_set(
    """person people individual individuals user users owner owners holder holders maintainer maintainers
    administrator administrators admin admins author authors developer developers contributor contributors
    member members team teams committee committees group groups staff employee employees customer customers
    vendor vendors project projects organization organizations organisation organisations company companies
    community council board everyone everybody anyone anybody nobody someone somebody root superuser
    operator operators reviewer reviewers editor editors publisher publishers distributor distributors
    packager packagers upstream leader leaders delegate delegates chair president director directors officer
    officers volunteer volunteers sponsor sponsors partner partners government authority authorities court
    foundation consortium party parties creator creators founder founders inventor inventors writer writers
    student students teacher teachers parent parents resident residents citizen citizens visitor visitors
    guest guests applicant applicants participant participants subscriber subscribers licensee licensees
    requester requesters submitter submitters committer committers caller callers library libraries school
    schools university universities hospital hospitals bank banks agency agencies department departments
    ministry club clubs association associations society societies"""
)
_ROLE_STEMS = frozenset(terms(" ".join(ROLE_NOUNS)))
_HANDLE = lazy_pattern(r"(?<![\w.])@[A-Za-z0-9][\w-]*")  # "@sharkdp": a person by their account
# "librarian", "technician", "historian": a person by their occupation
_OCCUPATION = lazy_pattern(r"\b[a-z]{3,}ians?\b", re.I)
# the agent of a passive ("Shelf codes are assigned by the regional registry"); not a manner ("by default",
# "by hand", "by running …")
_PASSIVE_AGENT = lazy_pattern(
    r"\b(?:is|are|was|were|be|been|being)\s+(?:\w+ly\s+)?\w+(?:ed|en|wn|t)\s+by\s+"
    r"(?!(?:default|hand|design|means|way|far|name|itself|themselves|\w+ing)\b)\w",
    re.I,
)

_PERMISSION_ASKED = lazy_pattern(
    r"^(?:who|whom)\s+(?:can|may|could|might|gets?\s+to"
    r"|(?:is|are)\s+(?:allowed|permitted|able|authori[sz]ed|entitled|eligible)\b)",
    re.I,
)
_PERMISSION = lazy_pattern(r"\b(?:can|may|allowed|permitted|authori[sz]ed|entitled|eligible|able)\b", re.I)
_RESTRICTION = lazy_pattern(r"\b(?:only|unless|except|solely|exclusively)\b", re.I)


_AGENT_VERB = lazy_pattern(
    r"^(?:who|whom)\s+(?:(?:can|may|could|might|should|must|will|would|gets?\s+to|did|does|do)\s+"
    r"|(?:is|are|was|were)\s+(?:allowed|permitted|able|authori[sz]ed|entitled|eligible|supposed)\s+to\s+)?"
    r"([a-z][\w-]*)",
    re.I,
)
_COPULAS = frozenset(["is", "are", "was", "were", "be", "has", "have", "had"])


def agent_action(question: str) -> tuple[str, str]:
    """(the verb a "who" question asks the agent of, what follows it): "Who may claim a prefix?" → ("claim", "a
    prefix"); ("", "") for "Who is X?" and other questions."""
    asked = asked_clause(question).strip()
    m = _AGENT_VERB.match(asked)
    if m is None or m.group(1).lower() in _COPULAS:
        return "", ""
    return m.group(1).lower(), asked[m.end() :]


def asks_permission(question: str) -> bool:
    """Whether a "who" question asks who may do something ("Who is allowed to use …?", "Who can merge …?")."""
    return _PERMISSION_ASKED.match(asked_clause(question).strip()) is not None


def names_person(text: str, asked: set[str]) -> bool:
    """Whether `text` names a person the question does not name: "Tideway Drive" does not answer "Who
    founded Tideway?"."""
    return any(not set(terms(n)) & asked for n in names_in(text))


def names_role(text: str, asked: set[str]) -> bool:
    """Whether `text` names, other than the question does, an account ("@name"), a person by role, by
    occupation or a group ("a project", "the librarian", "the maintainers"), or the agent of a passive ("… are
    assigned by the registry")."""
    if any(p.search(text) for p in (_HANDLE, _PASSIVE_AGENT)):
        return True
    named = set(terms(text)) & _ROLE_STEMS | set(terms(" ".join(_OCCUPATION.findall(text))))
    return bool(named - asked)


# a verb in the passive: a form of "be", an optional "not" or adverb, the participle
_BE = r"\b(?:is|are|was|were|be|been|being)\s+(?:not\s+)?(?:\w+ly\s+)?"
_AGENT_AFTER = lazy_pattern(r"\s+by\s+\w")


def agentless(text: str, verb: str) -> bool:
    """Whether `text` says the asked verb (its stem) only in the passive without an agent ("their edits are
    not reviewed"): it names no one who does it, whatever roles it names besides."""
    said = [m for m in re.finditer(r"[A-Za-z][\w-]*", text) if next(iter(terms(m.group(0))), "") == verb]
    if not said:
        return False
    return all(
        re.search(_BE + r"$", text[: m.start()], re.I) is not None and not _AGENT_AFTER.match(text, m.end())
        for m in said
    )


def grants(text: str) -> bool:
    """Whether `text` states a permission ("can", "may", "is allowed")."""
    return _PERMISSION.search(text) is not None


def restricts(text: str) -> bool:
    """Whether `text` states a permission with its restriction ("can … if, and only if, …", "only … may")."""
    return grants(text) and _RESTRICTION.search(text) is not None
