"""Answer passages: the one to three consecutive sentences of one unit that answer a question, or none.

Passage retrieval over the evidence, then an answerability test:
- candidates are windows of 1-3 consecutive sentences of one unit (a sentence and the one that finishes
  it: "If this option is not given, tar examines TAPE. If it is set, its value is the archive name.");
- a window scores the idf-weighted share of the question's terms it states (terms only its heading,
  definition term or lead-in states count at a reduced weight), plus a bonus when it holds an answer of
  the expected type (a number for "how many", a version for "which release"), minus a small cost per
  extra sentence, so the shortest passage that says it wins;
- the best window answers only when it (with its unit's context: term, title, heading path) names every
  key term of the question (numbers, options, codes, names that are not common to the whole evidence),
  covers enough of the question's weighted terms, and, for a question whose answer has a shape, holds an
  answer of that shape. Otherwise the evidence does not answer: no passage.

A dated heading (a changelog entry's version, a log's date) holds the answer of a passage that reports
what happened then; not of one that states an intention ("upstream intends to …"). A question about the
future ("in which release will …") is answered only by a passage that speaks of the future.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.agent_answers import restricts
from mrpvm.plugins.sdk.answer_types import SHAPED_TYPES, mentions_type, option_kinds
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import EXTREMES, terms

from .action import Action, acts, misapplied
from .answer_form import DEFAULT_STEMS, states_default
from .asked_kind import PURPOSE, asked_attribute, kind_said, labels_attribute
from .asked_slot import names_sibling, slot_as_context, slot_stem
from .context_terms import (
    KEY_SHAPE,
    entry_title,
    header_terms,
    source_title,
)
from .definiendum import apposes, asked_subject, relates
from .directives import Condition, condition_of, stands_to, stated_conditions, tells_what_to_do
from .evidence import Scorer, Sentence
from .lexicon import LIGHT_STEMS
from .meaning import Meaning
from .narrowing import contradicts, quoted_share
from .qualifiers import states_former
from .shapes import names_other_person
from .soft_terms import soft_coverage
from .window_reading import FUTURE, WindowReading
from .windows import Passage, windows

EXTRA_SENTENCE_COST = 0.06
TYPE_BONUS = 0.15
UNTYPED_FACTOR = 0.5  # a window without an answer of the expected shape is worth this much
CONTEXT_FACTOR = 0.6  # a question term only the heading/term/lead-in states
UNFOCUSED_COST = 0.004  # per word of the passage that the question does not ask about
CONDITION_BONUS = 0.1  # the passage states a condition as the question does (same polarity)
MIN_COVERAGE = 0.38  # weighted share of the question terms the passage and its context state
# "I did X and Y happened. Why?": the user's own account of the situation is worded unlike the source
MIN_REASON_COVERAGE = 0.25
# Meaning (meaning.py), calibrated on ../shared/eval/real01-10 only: a window's cosine with the question
# adds SEM_WEIGHT x cosine to its score; a passage this close answers with fewer of the question's words
# (a paraphrase), and one under SEM_FLOOR does not answer whatever words it shares with the question.
SEM_WEIGHT = 0.15
SEM_ACCEPT = 0.6
SEM_FLOOR = 0.25
SEM_KEY = 0.65


# answer types a definition answers ("What is X?" expects an entity; "" an open question or a compared side)
DEFINED_TYPES = frozenset({"", "definition", "entity"})
# "X is a …", "X are …", "X means …": the sentence that defines what stands before its copula
DEFINING = lazy_pattern(r"^(.{1,80}?)\s+(?:is|are|means|refers to)\s+(?:an?|the|one|any)\b", re.I)


class Judge(WindowReading):
    """Scores windows for one question and tells whether the best one answers it."""

    def __init__(
        self,
        scorer: Scorer,
        answer_type: str,
        keys: set[str],
        future: bool = False,
        condition: Condition | None = None,
        year: bool = False,
        options: list[set[str]] | None = None,
        meaning: Meaning | None = None,
        subject: set[str] | None = None,
        foreign: str = "",
        common: set[str] | None = None,
        titled: bool = False,
        untimed: bool = False,
        circumstance: bool = False,
        frequency: bool = False,
        action: Action | None = None,
        defined: frozenset[str] = frozenset(),
        permission: bool = False,
        agent: tuple[str, str] = ("", ""),
        origin: bool = False,
        written: frozenset[str] = frozenset(),
        made: Action | None = None,
        documented: frozenset[str] = frozenset(),
        event: str = "",
        strict_if: bool = False,
        program: str = "",
        past: bool = False,
        default: bool = False,
        kind: tuple[str, str] = ("", ""),
        question: str = "",
    ):
        self.scorer = scorer
        self.kind = kind  # the fine kind the question asks for and its word (asked_kind.py), its text
        self.question = question
        self.slot = slot_stem(question)  # "What value does …": the noun the answer fills (asked_slot.py)
        self.entry_kind = header_terms(*option_kinds(question))  # "the -f option": said by the option's entry
        self.attribute = asked_attribute(question)  # "What is the penalty for …": penalty
        self.default = default  # "what is the default X?": a passage that states a default value answers it
        self.past = past  # the question asks about the past ("What was …?"): a past-only state answers it
        self.program = program  # "which quill command …": the program whose command is asked (shapes.py)
        self.preceding: dict[tuple[str, int], str] = {}  # each sentence of the pool by its unit and place
        # a condition set after what is asked ("… when no name is given?") is matched only by a condition
        # about the same thing (`same_thing`): "If the cache doesn't fit …" says nothing of an unset name
        self.strict_if = strict_if
        self.event = event  # "In which version was X fixed?": the event whose version is asked ("fixed")
        self.documented = documented  # the keys the evidence documents as entries: options by the document
        self.written = written  # the tokens the question writes with symbols ("${VAR:?err}"): as written
        self.made = made  # "how do I make <object>": a light verb's object, which a success must name
        self.permission = permission  # "who may …": answered by a rule that grants it
        # the verb "who …" asks the agent of and its object's terms ("Who can close an issue?": close, issu)
        self.agent = (next(iter(terms(agent[0])), ""), set(terms(agent[1])))
        self.defined = defined  # "What is X?": X's terms (definiendum.py)
        self.subject_asked = asked_subject(question)  # ... or "What does X do?"
        self.action = action  # "how do I <verb> <object>": a passage doing it to another object answers not
        self.titled = titled  # the evidence comes from several documents: their titles tell them apart
        self.foreign = foreign  # the stem of the question's focus when the documents never use it (focus.py)
        self.common = common or set()  # question terms most evidence units state (common_terms)
        self.meaning = meaning
        self.subject = subject or set()  # the names the question asks about (a success must state them)
        self.answer_type = answer_type
        self.keys = keys
        self.future = future  # the question asks about the future ("when will …")
        self.asked_if = condition  # the condition the question sets ("If I don't pass -f, …")
        self.condition = condition.negated if condition else None  # is it negated?
        self.year = year
        self.untimed = untimed  # the number asked for is no duration ("which port …")
        self.circumstance = circumstance  # "when does …": a condition or a span answers as a date does
        self.frequency = frequency  # "how often …": a frequency answers as a figure does
        self.origin = origin  # "where … from?": a "from" phrase states the place asked for
        # a choice question ("from 0 or from 1?") is answered by a passage that states one of its options:
        # the key terms of the options are needed one option at a time, not all together
        self.options = [o & keys for o in options or [] if o & keys]
        if len(self.options) < 2:
            self.options = []

    def score(self, window: list[Sentence]) -> Passage:
        sc = self.scorer
        own, ctx = slot_as_context(*self._stated(window), self.slot)
        heading = self.entry_heading(window[0]) if self.answer_type in DEFINED_TYPES else frozenset()
        if heading:  # an entry's lead sentence is about its heading: "[-m, --max-time:] Maximum time …"
            own, ctx = own | heading, ctx - heading
        if entry := self.entry_default(window):  # its default, stated in a sentence of its own
            own, ctx = own | entry, ctx - entry
        matched_own = sc._matched(own)
        matched_all = sc._matched(own | ctx)
        value = (matched_own + CONTEXT_FACTOR * (matched_all - matched_own)) / sc.present
        typed, dated_by = self.typed(window)
        if self.answer_type == "person" and typed and not names_other_person(window, set(sc.weights)):
            pass  # a role or a group answers "who", a name answers it best: no bonus
        elif self.answer_type in SHAPED_TYPES:
            value = value + TYPE_BONUS if typed else value * UNTYPED_FACTOR
        elif self.answer_type == "procedure" and tells_what_to_do(window):
            value += TYPE_BONUS  # "how do I …": the passage that tells what to do
        elif self.answer_type == "command" and self.writes_command(window):
            value += TYPE_BONUS  # "which command …": code, or a command beyond the question's own words
        elif self.answer_type == "command" and any(mentions_type(s.text, "command") for s in window):
            # a window that looks like a command's answer only by the question's own terms written as code
            # ("the `.appx` packages download …"): the question quoted back, worth what an untyped window is
            value *= UNTYPED_FACTOR
        value += self._detail_bonus(window, own | ctx)
        # "what is X for?" is no "what is X?"
        defining = self.answer_type in DEFINED_TYPES and self.kind[0] != PURPOSE
        if defining and (heading or any(self.defines(s) for s in window)):
            value += TYPE_BONUS  # "what is X?": the sentence that says what X is
        value -= EXTRA_SENTENCE_COST * (len(window) - 1)
        # of passages that say as much, the one that says less besides is the focused one
        said = {t for s in window for t in s.terms}
        value -= UNFOCUSED_COST * len(said - set(sc.weights))
        if self.permission and any(restricts(s.text) for s in window):
            value += CONDITION_BONUS  # "who may …": the rule that says who, and who alone ("only if …")
        if self.asked_if is not None:
            agrees, opposes, _ = self.conditions(window)
            if agrees:
                value += CONDITION_BONUS  # "If I don't pass -f" answered by "If this option is not given"
                if self._names_asked_value(window):
                    value += CONDITION_BONUS  # the very case asked: "When set to 'wide', …"
            elif opposes and not agrees:
                value -= CONDITION_BONUS  # said only under the opposite condition ("If a name is given, …")
        text = " ".join(s.text for s in window)
        value += CONDITION_BONUS * (quoted_share(text, self.written) - contradicts(text, set(sc.weights)))
        close = self.meaning.window(window) if self.meaning is not None else None
        if close is not None:
            value += SEM_WEIGHT * close
        context = self.context(window[0])
        coverage = sc.asked_coverage(own | ctx | context)
        return Passage(window, value, coverage, typed, dated_by, close)

    def states_detail(self, window: list[Sentence]) -> bool:
        """The window states the detail the question's form asks for: a default as a value ("The default is
        8", not "the default port can be changed"), or what its fine kind asks (asked_kind.kind_said: a purpose
        in so many words, a code, named instances, an evaluation)."""
        return self.states_detail_text(" ".join(s.text for s in window))

    def states_detail_text(self, text: str) -> bool:
        return (
            (self.default and states_default(text))
            or kind_said(*self.kind, text, self.question)
            or labels_attribute(text, self.attribute)
        )

    def _detail_bonus(self, window: list[Sentence], said: set[str]) -> float:
        """TYPE_BONUS for a window that states the asked detail, in proportion to what else of the question it
        states: another setting's default ("The defaults are 10 and 20") is not it."""
        if not self.states_detail(window):
            return 0.0
        sc = self.scorer
        rest = set(sc.weights) - DEFAULT_STEMS
        return TYPE_BONUS * sc._matched(said & rest) / (sc._matched(rest) or 1.0)

    def defines(self, sentence: Sentence) -> bool:
        """The sentence defines what the question asks about: what stands before its copula is said in the
        question's own words ("The zorblax is a teal bird." for "What is the zorblax?")."""
        match = DEFINING.match(sentence.text)
        defined = set(terms(match.group(1))) if match else set()
        return (
            (bool(defined) and defined <= set(self.scorer.weights))
            or apposes(self.defined, sentence)
            or relates(self.subject_asked, sentence)
        )

    def said(self, passage: Passage) -> set[str]:
        """WindowReading.said, with what the lead sentence of the asked entry states by standing under it."""
        said = super().said(passage)
        if self.answer_type in DEFINED_TYPES:
            said |= self.entry_heading(passage.sentences[0])
        return said | self.entry_default(passage.sentences)

    def entry_default(self, window: list[Sentence]) -> frozenset[str]:
        """For a question asking a default: the terms of the entry (a definition's term, else the innermost
        heading) a window stating a default value stands under. "Defaults to `list`." in its own sentence
        under `replies_policy` states replies_policy's default as much as "The replies_policy defaults to
        list." would; a sentence of another unit that only names the setting does not."""
        if not self.default or not states_default(" ".join(s.text for s in window)):
            return frozenset()
        return header_terms(entry_title(window[0].unit))

    def entry_heading(self, sentence: Sentence) -> frozenset[str]:
        """The terms of the heading of the entry this sentence leads, when that heading names what the
        question asks about (a manual's option, a glossary's term): "Maximum time in seconds …" under
        "-m, --max-time", not a sentence of another entry that mentions it ("See also -m, --max-time.")."""
        unit = sentence.unit
        definition = unit.chunkType == "definition" and bool(unit.title)  # a definition unit is its entry
        if sentence.order[2] != 0 or not (definition or unit.unitIndex == 0):  # or a section's first unit
            return frozenset()
        heading = header_terms(entry_title(unit))
        if self.titled:
            heading |= source_title(unit)
        # an option the question writes out is what it asks about even when every unit names it
        asked = (self.subject - self.common) | {k for k in self.keys if KEY_SHAPE.search(k)}
        if not asked or not asked <= heading:
            return frozenset()
        if names_sibling(entry_title(unit), set(sentence.terms), set(self.scorer.weights)):
            return frozenset()  # "Note: a_open and a_close return 0" under "a_open, a_close, a_size"
        # the entry is "the -f option of curl": its heading is the option the question names, its kind noun
        # ("option", "flag") is what the heading is, and it stands in its document, as every unit of it does
        return heading | self.entry_kind | source_title(unit)

    def _instance(self, passage: Passage) -> bool:
        """With a foreign focus: the documents lack no other word of the question (light verbs aside: "use",
        "make") and the passage states each one that is not the documents' own subject ("which library does the plugin use to minify …" answered
        by what minifies, named without the word "library"); a second word the documents lack ("… license …
        released") marks a question about what they do not cover."""
        said = self.said(passage)
        others = [
            parts for parts, _ in self.scorer.asked if self.foreign not in parts and not parts <= LIGHT_STEMS
        ]
        return all(
            not parts <= self.scorer.unknown and (parts & said or parts <= self.common) for parts in others
        )

    def _announces(self, s: Sentence) -> bool:
        """A bare lead-in: a prose sentence ending with a colon that states none of the question's words
        itself ("For example::" under the asked entry's heading): its content is the block after it."""
        return not s.code and s.text.rstrip().endswith(":") and self.scorer.own_score(s) == 0

    def answers(self, passage: Passage, by_meaning: bool = True) -> bool:
        """The passage states the question's key terms, enough of its words, and an answer of its shape;
        `by_meaning`: a passage close enough in meaning may state fewer of them (a paraphrase)."""
        needed = MIN_REASON_COVERAGE if self.answer_type == "reason" else MIN_COVERAGE
        close = passage.meaning
        if close is not None and close < SEM_FLOOR:
            return False  # the question's words without its meaning
        if not self.past and all(states_former(s.text) for s in passage.sentences):
            return False  # "X used to be the default" does not say what the default is now
        if self.answer_type not in ("command", "procedure") and all(map(self._announces, passage.sentences)):
            return False  # "For example:" announces what follows it; without what follows it says nothing
        if self.foreign and (close is None or close < SEM_KEY) and not self._instance(passage):
            return False  # asked about what the documents never name: a paraphrase of it, or an instance
        if self.strict_if and self.asked_if is not None:
            agrees, opposes, _ = self.conditions(passage.sentences)
            if opposes and not agrees:
                return False  # "If a name is given, …" / "When set to 'narrow', …" is another case than asked
        if self.action is not None and misapplied(self.action, passage.sentences):
            return False  # "remove the packages from the environment" does not say how to delete it
        if self.action is not None and not acts(self.action, passage.sentences, self.said(passage)):
            return False  # names not the asked object, or neither the action nor anything to do
        if passage.coverage < needed and not self._paraphrase(passage, needed, by_meaning):
            return False
        if self.future and self.answer_type in ("version", "date"):
            # what happened in a release does not say what a later one will do: one sentence must state
            # the future event and its time
            when = [s for s in passage.sentences if FUTURE.search(s.text)]
            if not any(mentions_type(s.text, self.answer_type) for s in when):
                return False
        said = self.said(passage)
        if not self.options:
            return self.keys <= said or (by_meaning and self._paraphrased(passage, self.keys - said))
        optional = set().union(*self.options)
        return self.keys - optional <= said and any(option <= said for option in self.options)

    def _paraphrase(self, passage: Passage, needed: float, by_meaning: bool) -> bool:
        """A passage under the coverage needed answers as a paraphrase: close in meaning as a whole, or word
        by word (the question words it states by a near-synonym count: soft_terms.py)."""
        close = passage.meaning
        if not by_meaning or close is None:
            return False
        return close >= SEM_ACCEPT or self.soft_coverage(passage) >= needed

    def soft_coverage(self, passage: Passage) -> float:
        """The passage's coverage with a question word it states by a near-synonym counted (soft_terms.py)."""
        have = WindowReading.said(self, passage)
        return soft_coverage(self.scorer, self.question, have, passage.sentences, self.keys)

    def _paraphrased(self, passage: Passage, missing: set[str]) -> bool:
        """A passage that means the question (cosine >= SEM_KEY) answers it without repeating a key name the
        collection holds elsewhere (the document's own subject, a product named in its title); a key term the
        collection never holds marks a question about something the documents do not cover."""
        close = passage.meaning
        return (
            close is not None
            and close >= SEM_KEY
            and self.scorer.collection_known
            and not missing & self.scorer.unknown
            and not missing
            & EXTREMES  # "the maximum number": a passage that states no maximum does not say it
        )

    def _names_asked_value(self, window: list[Sentence]) -> bool:
        """The window's conditions that name values name the one the asked condition names, and no other
        case ("When set to 'wide', …" and not also "When set to 'narrow', …")."""
        asked = self.asked_if
        if asked is None or not asked.values:
            return False
        named = [c for c in map(condition_of, (s.text for s in window)) if c is not None and c.values]
        return bool(named) and not any(c.names_other_value(asked) for c in named)

    def conditions(self, window: list[Sentence]) -> tuple[bool, bool, bool]:
        """How the conditions the window states stand to the asked one: (one agrees with it, one about the same
        thing opposes it, any states the opposite polarity). An opening "Otherwise …" is read against the
        sentence before it in its unit."""
        asked = self.asked_if
        if asked is None:
            return False, False, False
        texts = [s.text for s in window]
        first = window[0]
        before = self.preceding.get((first.unit.id, first.order[2] - 1))
        if before is not None:
            texts.insert(0, before)
        stated = [c for c in stated_conditions(texts, asked.about)[1 if before is not None else 0 :] if c]
        # a clause term weighs its rarity in the evidence: a generic word ("specified") shared is not enough
        return stands_to(stated, asked, self.strict_if, lambda t: self.scorer.weights.get(t, 1.0))

    def ranked(self, pool: list[Sentence]) -> list[Passage]:
        """Every window, best first."""
        self.preceding = {(s.unit.id, s.order[2]): s.text for s in pool if not s.code}
        return sorted(
            (self.score(w) for w in windows(pool)),
            key=lambda p: (-p.score, p.sentences[0].order, len(p.sentences)),
        )

    def best_of(self, scored: list[Passage]) -> Passage | None:
        """The best-scoring window that answers, if the best-scoring windows answer at all."""
        if not scored or scored[0].score <= 0:
            return None
        top = scored[0].score
        for passage in scored[:12]:
            if passage.score < top * 0.75:
                break
            if self.answers(passage) and (passage.typed or self.answer_type not in SHAPED_TYPES):
                return passage
        return None

    def best(self, pool: list[Sentence]) -> Passage | None:
        return self.best_of(self.ranked(pool))
