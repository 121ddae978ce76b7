"""Whether a chosen passage supports its answer: `success`, or the best candidate reported as weak.

The judge (passages.py) picks the passage that answers best and lets a paraphrase through (a passage close in
meaning that repeats few of the question's words). `success` asks more of it: it answers by the question's
own words, means what the question asks (with the model), holds an answer of the asked shape, names what
the question is about (the object of "how do I make …", not only as the alternative set aside: "instead of
X") and, when the question sets a condition, is not said under the opposite one.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.answer_shapes import SHAPED_TYPES
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms
from msgspec.structs import replace

from .action import names_object
from .answer_form import states_default
from .code_fields import names_label
from .context_terms import entry_title, header_terms
from .definiendum import about
from .directives import condition_of
from .evidence import Sentence
from .passages import DEFINED_TYPES, SEM_FLOOR, Judge, Passage

SEM_SUPPORT = 0.5  # an answer is `success` only when its passage answers by its words and is this close
# ... or, short of that, this close when its passage (with its headings) states every word of the question: a
# sentence that restates the whole question answers it though a model finds it less alike ("What does dedent
# do?" / "dedent(text): Remove any common leading whitespace …": cosine 0.42). Calibrated on real01-10 and
# dev01-04: weak answers covering the question fully are right at cosine 0.37-0.46 (4) and 0.25-0.31 (2), one
# is wrong at 0.36; the round 0.4 promotes 3 right ones and no wrong one.
FULL_COVERAGE = 0.95
SEM_FULL = 0.4
OPENING_TERMS = 3  # a sentence is about what it names among its first terms (its subject)
# a sentence of a value and at most this many other words has no room for a subject of its own: it continues
# the one before it ("Number of times brine retries an upload. The default is 3.")
ELLIPTIC_TERMS = 3


def supports(judge: Judge, passage: Passage) -> bool:
    """The passage answers by the question's own words (no allowance for a paraphrase) and, with the model,
    means what the question asks: the answer is reported as `success`, otherwise as weak."""
    close = passage.meaning
    # the lead sentence of the asked option's own entry is its definition by the document's layout,
    # however unlike the question its words are ("-x option of tar" / "Extract files from an archive.")
    defines = judge.answer_type in DEFINED_TYPES and bool(judge.entry_heading(passage.sentences[0]))
    # so is a record's field whose label the question names ("Upstream-Contact: …" for "the upstream contact")
    defines = defines or names_label(set(judge.scorer.weights), passage.sentences[0].text)
    return (
        judge.answers(passage, by_meaning=False)
        and (close is None or close >= _closeness_needed(defines, passage.coverage))
        and judge.subject <= judge.said(passage)  # about what was asked, not only like it
        and judge.carries_type(passage)
        and _about_written(judge, passage)
        and (judge.answer_type not in DEFINED_TYPES or about(judge.defined, passage.sentences[0]))
        and _slot_in_asked_sentence(judge, passage)
        and _condition_kept(judge, passage)
        and _condition_spoken_to(judge, passage)
        and (judge.made is None or names_object(judge.made, passage.sentences, judge.said(passage)))
        and not _only_contrasted(judge, passage)
    )


def leads_nowhere(chosen: list[Passage]) -> bool:
    """A quoted passage ends on a lead-in ("On Windows, run:", "… using the current source::") and so does
    its unit: the document announces the answer there without stating it (a unit that goes on with the code
    or list it leads into holds it, even when the quote stops short of it: "put this list in a
    ``requirements.txt`` file:" answers "in which file"). Its colon is written as a period when quoted, so
    the form's check of the quoted text (answer_form.unstated) cannot see it; this reads the unit itself."""
    return any(_leads_in(p.sentences[-1].text) and _leads_in(p.sentences[-1].unit.claim) for p in chosen)


# a lead-in: a colon, or a clause left without the object its last word takes ("… the message will look
# like", "… is done as follows"): what it announces stands after it, in a block of its own
_LEAD_IN = lazy_pattern(r"(?::|\b(?:like|as follows|the following|such as|as in))\s*$", re.I)


def _leads_in(text: str | None) -> bool:
    return bool(text) and _LEAD_IN.search((text or "").rstrip()) is not None


# "install ``tox`` instead of ``pytest``": what stands after these is the alternative set aside
_CONTRASTED = lazy_pattern(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+([^,.;:!?]{1,80})", re.I)


def _only_contrasted(judge: Judge, passage: Passage) -> bool:
    """A name the question asks about stands in the passage only as the alternative set aside ("Which
    command installs pytest?" / "… you will have to install tox instead of pytest."): the passage says what
    to do with something else."""
    asked = set(judge.scorer.weights) - judge.common  # the question's words, less those most units state
    text = " ".join(s.text for s in passage.sentences)
    aside = [t for m in _CONTRASTED.finditer(text) for t in terms(m.group(1))]
    if not aside:
        return False
    said = terms(text)
    return any(t in asked and said.count(t) == aside.count(t) for t in set(aside))


def _condition_kept(judge: Judge, passage: Passage) -> bool:
    """For a question that sets a condition ("What happens when X is false?"): the passage does not answer
    only under the opposite one ("If true, …" says what happens when X is true, not when it is false). A
    passage that states no condition is left to the other tests."""
    agrees, opposes, opposite = judge.conditions(passage.sentences)
    return agrees or not (opposes if judge.strict_if else opposite)


def _condition_spoken_to(judge: Judge, passage: Passage) -> bool:
    """For a question that sets a condition after what it asks ("Which folder is used if I don't set
    one?"): the passage speaks to it — it states a word of the condition's clause, a condition of the same
    polarity ("If omitted, …"), or, for a negated one (nothing set), a default as a value ("defaults to
    X"). A passage that says nothing of the condition describes the asked thing, not what holds under it
    ("Set the folder the notes are saved in.")."""
    asked = judge.asked_if
    if asked is None or not judge.strict_if or not asked.about:
        return True
    if asked.about & judge.said(passage):
        return True
    stated = [c for s in passage.sentences if (c := condition_of(s.text)) is not None]
    if any(c.negated == asked.negated for c in stated):
        return True
    return asked.negated and any(states_default(s.text) for s in passage.sentences)


def _slot_in_asked_sentence(judge: Judge, passage: Passage) -> bool:
    """For an answer of a shape (a time, a place, a number): a sentence that holds it states a word of the
    question itself. A time taken from one sentence does not answer about what another sentence (or only
    the heading above it) names: "The page index is kept in X. Templates are copied when a notebook is
    created." says nothing of when the page index is built; a short sentence continues the one before it
    ("The default is 3."). An answer its heading holds (a changelog's release) is left to the judge."""
    if judge.answer_type not in SHAPED_TYPES:
        return True
    holding = [s for s in passage.sentences if judge.typed([_unheaded(s)])[0]]
    return not holding or any(
        judge.scorer.own_score(s) > 0 or len(set(s.terms)) <= ELLIPTIC_TERMS for s in holding
    )


def _unheaded(s: Sentence) -> Sentence:
    """The sentence without its unit's headings and term: what it holds by its own words."""
    return replace(s, unit=msgspec.structs.replace(s.unit, sectionTitle=None, title=None))


def _closeness_needed(defines: bool, coverage: float) -> float:
    """How close in meaning a passage must be: an entry's lead sentence or a passage restating the whole
    question need less."""
    if defines:
        return SEM_FLOOR
    return SEM_FULL if coverage >= FULL_COVERAGE else SEM_SUPPORT


def _about_written(judge: Judge, passage: Passage) -> bool:
    """For "what does X do?" about something written out (an option): the passage stands in X's entry,
    defines X or opens with X; a sentence that only mentions X ("See also -m, --max-time.") does not say
    what X does."""
    written = {k for k in judge.keys if k.startswith("-")} | {t for t in judge.subject if "-" in t}
    if judge.answer_type != "definition" or not written:
        return True
    first = passage.sentences[0]
    if written <= header_terms(entry_title(first.unit)) or judge.defines(first):
        return True
    return bool(written & set(first.terms[:OPENING_TERMS]))
