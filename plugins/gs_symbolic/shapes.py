"""Whether a window's text holds an answer of the shape a question asks for (passages.Judge reads these for
its `typed` and `carries_type` tests): a person the question does not name, a role doing what "who …" asks,
a figure or a place, a command written out, an options table's row keyed by code.

`asked` is the set of the question's weighted terms (Scorer.weights).
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.agent_answers import agentless, grants, names_person, names_role
from mrpvm.plugins.sdk.answer_shapes import mentions_type, without_references
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.place_answers import states_place
from mrpvm.plugins.sdk.text import terms

from .answer_form import states_figure
from .context_terms import unnumbered
from .evidence import Sentence

ROW_KEY = lazy_pattern(r"^\s*([^\s—:][^—:]{0,40}?)\s+—\s")
_FILE_SPAN = lazy_pattern(
    r"`[.~/][^`\s]*`$"
)  # "`.AppxBundle`", "`~/.ssh/config`": a file named, not a command
_WRITTEN_COMMAND = lazy_pattern(r"`[^`]+`|^\s*\$ .+|(?<![\w-])--?[A-Za-z][\w-]*|\b\w+\(\d\)")
YEAR = lazy_pattern(r"\b(?:1[6-9]|20)\d\d\b")


def code_keyed(s: Sentence) -> bool:
    """A table row whose key (first cell) is written as code: a setting's or option's name (`inject`)."""
    row = ROW_KEY.match(s.text) if s.unit.chunkType == "table" else None
    return row is not None and "`" in row.group(1)


def role_does(s: Sentence, asked: set[str], agent: tuple[str, set[str]], permission: bool) -> bool:
    """The sentence names a role ("a project") doing what "who …" asks (`agent`: the stem of its verb and
    the terms of its object): its verb and a word of its object ("closes a pull request" is not "closes an
    issue"); `permission` ("who may …"): by a rule that grants it."""
    said = set(s.terms) | s.carried | s.under
    verb, thing = agent
    if verb and (verb not in said or (thing and not thing & said) or agentless(s.text, verb)):
        return False  # not the asked verb on its object, or only "… are not reviewed": no one does it
    return names_role(s.text, asked) and (not permission or grants(s.text))


def names_other_person(window: list[Sentence], asked: set[str]) -> bool:
    """The window (or its definition's term) names a person the question does not."""
    unit = window[0].unit
    term = unnumbered(unit.title) if unit.chunkType == "definition" and unit.title else ""
    return any(names_person(t, asked) for t in [*(s.text for s in window), term])


def shaped(text: str, answer_type: str, asked: set[str], origin: bool) -> bool:
    """The text holds an answer of the expected shape; a figure for a number ("Number of days …" names the
    quantity "how many days" asks for without stating it); `origin` ("where … from?"): a "from" phrase
    states the place."""
    if answer_type == "number":
        return states_figure(text, asked)
    if answer_type == "location":
        return states_place(text, origin)
    return mentions_type(text, answer_type)


def writes_new_command(text: str, asked: set[str]) -> bool:
    """The text writes a command (a code span that is not a file's name, an option) that is more than the
    question's own words: "`.appx`" quoted back does not say which command installs it."""
    return any(
        set(terms(m.group(0))) - asked and not _FILE_SPAN.match(m.group(0))
        for m in _WRITTEN_COMMAND.finditer(without_references(text))
    )


# "which quill command …", "what fenc subcommand …": the program whose command is asked
_PROGRAM_COMMAND = lazy_pattern(r"\b(?:which|what)\s+([\w.+-]+)\s+(?:sub)?commands?\b", re.I)
_OPTION_LABEL = lazy_pattern(r"^\s*--?[A-Za-z]")
# a label's words, apart from its markup and hyphens ("`quill merge`", "**quill-merge**"); "g++" stays whole
_LABEL_WORDS = lazy_pattern(r"[^\w.+]+")


def asked_program(question: str) -> str:
    """The program a "which <program> command …" question names ("quill" for "Which quill command prints
    the index?"); "" when the question names none ("Which command …")."""
    m = _PROGRAM_COMMAND.search(question)
    return m.group(1).lower() if m else ""


def labels_command(label: str, program: str) -> bool:
    """A definition's term (or a row's key) can be the asked program's command: the question names no
    program, or the term names it ("quill index") or is one of its options ("--index"). A term of another
    kind ("`pkg-revision`", a field the program reads) is not "the quill command"."""
    if not program:
        return True
    return program in _LABEL_WORDS.split(label.lower()) or _OPTION_LABEL.match(label.strip("`* ")) is not None
