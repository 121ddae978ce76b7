"""What a window of a unit's sentences states, read for one question: its terms with the unit's context (term,
title, heading path), and whether it holds an answer of the shape the question expects (a number, a version, an
option, a command), in its own words or in a heading over it."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import SHAPED_TYPES, mentions_type
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms
from mrpvm.plugins.sdk.time_answers import mentions_untimed_number, states_circumstance, states_frequency

from .answer_form import labels_release
from .context_terms import source_title, unit_context, unit_text, unnumbered
from .directives import tells_what_to_do
from .documented import marks_documented
from .evidence import Scorer, Sentence
from .history import other_events_versions
from .option_named import names_option
from .shapes import (
    ROW_KEY,
    YEAR,
    code_keyed,
    labels_command,
    names_other_person,
    role_does,
    shaped,
    writes_new_command,
)
from .windows import Passage

# answers a heading may hold for the passages under it (a release, a date, an option line, a command)
HEADED_TYPES = frozenset({"version", "date", "option", "command"})

FUTURE = lazy_pattern(
    r"\b(?:will|shall|intends?|intended|plans?|planned|going to|in (?:the )?future|eventually|later on)\b",
    re.I,
)


class WindowReading:
    """The reading of windows that Judge (passages.py) scores: set up by Judge.__init__."""

    scorer: Scorer
    titled: bool  # the evidence comes from several documents: their titles tell them apart
    answer_type: str
    year: bool
    untimed: bool
    circumstance: bool
    frequency: bool
    origin: bool
    permission: bool
    agent: tuple[str, set[str]]
    event: str
    documented: frozenset[str]
    program: str
    question: str

    def context(self, sentence: Sentence) -> frozenset[str]:
        """unit_context, with the document's title when the evidence comes from several documents."""
        context = unit_context(sentence)
        return context | source_title(sentence.unit) if self.titled else context

    def _stated(self, window: list[Sentence]) -> tuple[set[str], set[str]]:
        own: set[str] = set()
        ctx: set[str] = set(source_title(window[0].unit)) if self.titled else set()
        for s in window:
            own.update(s.terms)
            own.update(s.carried)
            ctx.update(s.under)
        return own, ctx - own

    def typed(self, window: list[Sentence]) -> tuple[bool, str | None]:
        """(holds an answer of the expected shape, the heading that holds it instead of the passage)."""
        if self.answer_type not in SHAPED_TYPES:
            return True, None
        if self.year:  # "in which year …": a year, not any date-like number
            return any(YEAR.search(s.text) for s in window), None
        if self.untimed:  # "which port …": a number, not "after 20 minutes"
            return any(mentions_untimed_number(s.text) for s in window), None
        if self.circumstance and any(states_circumstance(s.text) for s in window):
            return True, None
        # "how often …": "weekly", said of what was asked, every word ("cleaned", not "replaced")
        if self.frequency and any(states_frequency(s.text) for s in window) and self._all_said(window):
            return True, None
        unit = window[0].unit
        term = unnumbered(unit.title) if unit.chunkType == "definition" and unit.title else ""
        asked = set(self.scorer.weights)
        if self.answer_type == "person":
            # someone the question does not name, by name or by role doing what is asked (shapes.role_does)
            if names_other_person(window, asked) or any(
                role_does(s, asked, self.agent, self.permission) for s in window
            ):
                return True, None
        elif any(
            shaped(other_events_versions(s.text, self.event), self.answer_type, asked, self.origin)
            for s in window
        ):
            return True, None  # not "[bug introduced in 1.9]" for the release that fixed it
        elif term and mentions_type(term, self.answer_type):
            return True, None  # "which option …" answered by the term the passage defines
        elif self.answer_type == "option" and any(
            code_keyed(s)
            or marks_documented(s.text, self.documented)
            or names_option(s.text, asked, self.question, unit_text(s.unit, headings=True))
            for s in window
        ):
            # an options table's row, keyed by the option's name written as code; a sentence naming one by
            # its kind noun ("the SQLITE_FOO compile-time option")
            return True, None
        dated = self.answer_type in ("version", "date")
        if self.answer_type not in HEADED_TYPES or (dated and any(FUTURE.search(s.text) for s in window)):
            return False, None
        # the nearest heading on the unit's path that holds it: a changelog's "Features" under "v10.2.0", a
        # manual's option line ("-L, --location") over its description
        path = [part.strip() for part in (window[0].unit.sectionTitle or "").split(" > ") if part.strip()]
        for heading in reversed(path):
            if mentions_type(unnumbered(heading), self.answer_type) and (
                not dated or labels_release(heading)
            ):
                return True, heading if dated else None
        return False, None

    def _all_said(self, window: list[Sentence]) -> bool:
        """The window, with its unit's context, states every term of the question."""
        return set(self.scorer.weights) <= set().union(*self._stated(window), self.context(window[0]))

    def writes_command(self, window: list[Sentence]) -> bool:
        """The window holds a command beyond the question's own words: code, a command written as one
        (shapes.writes_new_command: not "`.appx`" quoted back), or the term a definition describes (a row's
        key) when it can be the asked program's command."""
        label = _label(window)
        asked = set(self.scorer.weights)
        named = bool(set(terms(label)) - asked) and labels_command(label, self.program)
        return named or any(s.code or writes_new_command(s.text, asked) for s in window)

    def carries_type(self, passage: Passage) -> bool:
        """The passage itself holds what the question asks for: a command (code, a command written as one, or
        the term a definition describes) for "which command …", something to do (an instruction, a command or
        code) for "how do I …"; an answer of the expected shape for a shaped type (typed() may find it in a
        heading)."""
        label = _label(passage.sentences)
        if self.answer_type == "command":
            return self.writes_command(passage.sentences)
        if self.answer_type == "procedure":
            return mentions_type(label, "command") or tells_what_to_do(passage.sentences)
        return passage.typed or self.answer_type not in SHAPED_TYPES

    def said(self, passage: Passage) -> set[str]:
        """The terms a passage states with its unit's context (term, title, headings)."""
        said = set(self.context(passage.sentences[0]))
        for s in passage.sentences:
            said.update(s.terms)
            said.update(s.carried)
            said.update(s.under)
        return said


def _label(window: list[Sentence]) -> str:
    """The label a window is quoted under: a definition's term ("loom lint", "-g, --listed"), or the first
    cell of a table row or list item ("loom lint — …")."""
    unit = window[0].unit
    label = unnumbered(unit.title) if unit.chunkType == "definition" and unit.title else ""
    if not label and (row := ROW_KEY.match(window[0].text)):
        label = row.group(1)
    return label
