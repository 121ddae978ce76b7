"""Qualifiers that change what a statement says about a yes/no question's proposition (issue 20, item 5).

Both polarity readers (propositions.polarity: the proposition word for word; polarity.verdict: looser
wording) count negations; these are the other ways English turns a statement's answer:

- a state that held only in the past ("was formerly called", "previously required", "used to run") does
  not hold now: No to a present-tense question, Yes to a past one ("Was it called …?");
- an exception ("encrypts every archive except the cache archives") says No of what it excepts: a
  question term stated only after "except" / "other than" / "apart from" / "excluding";
- a necessary condition ("runs on battery only if …") answers neither Yes nor No: the answer is the
  condition, quoted;
- "without" denies its object: "takes effect without a restart" says No to "Do I need to restart …?" when
  the question's own term is that object (the question's own "without" counts alike; polarity.py reads it,
  statements.py reads "without" as part of the predicate);
- a restriction answers No to a question about every member of a set: "checks only the first entry" or
  "not all of them" says No to "Does it check every entry?" (and nothing to "Does it check the first
  entry?"); a free choice ("Can the group have any GID?": "any" under a possibility modal) is also
  restricted by a necessity ("the group must have GID 5", "the port has to be above 1024");
- a question asking what one should do ("Should downstreams change …?") is answered only by a sentence with
  deontic force (a recommendation, a requirement, a command), not by what is possible or what some do
  ("some distributions allow it to be changed"); "discourage", "forbid" negate like "not";
- a comparison the other way ("don't assign less than 65536") is another proposition than the one asked
  ("more than 65536"): it answers nothing;
- frequency adverbs that mean "almost never" (rarely, seldom, hardly, scarcely) negate like "not"
  (lexicon NEGATORS), so "not usually" and "rarely" both answer No, quoting the hedged sentence.
"""

from __future__ import annotations

from .clauses import Tok, tokenize
from .lexicon import DEONTIC, NECESSITY, POSSIBILITY

_PAST_ONLY = frozenset(["formerly", "previously"])
_BE_FORMS = frozenset(
    ["be", "is", "are", "was", "were", "been", "being", "am", "'s", "isn't", "aren't", "not"]
)
_PAST_AUX = frozenset(["was", "were", "did", "had", "wasn't", "weren't", "didn't", "hadn't"])
_EXCEPT_ONE = frozenset(["except", "excluding", "excepting"])
_EXCEPT_TWO = frozenset([("other", "than"), ("apart", "from"), ("aside", "from"), ("except", "for")])


def past_only(toks: list[Tok]) -> bool:
    """The statement says the state held only in the past ("formerly", "previously", "used to")."""
    lows = [t.low for t in toks]
    return any(w in _PAST_ONLY for w in lows) or _habitual_used_to(lows)


def _habitual_used_to(lows: list[str], then: str = "") -> bool:
    """ "used to run" (past-habitual), optionally followed by `then` ("used to be"); not the passive of purpose
    ("is used to run", "can be used to")."""
    return any(
        lows[k : k + 2] == ["used", "to"]
        and (not then or lows[k + 2 : k + 3] == [then])
        and (k == 0 or lows[k - 1] not in _BE_FORMS)
        for k in range(len(lows))
    )


def states_former(text: str) -> bool:
    """The statement gives a state as a former one: "formerly", an opening "previously", or "used to be" (not
    the passive "is used to", nor a reduced relative: "the module used to create …" names a tool)."""
    low = text.lower()
    if "formerly" not in low and "previously" not in low and "used to be" not in low:
        return False  # most sentences: no tokenizing
    lows = [t.low for t in tokenize(text)]
    # "formerly" anywhere; "previously" only opening the statement ("Previously, the flag was …"), not as a
    # modifier ("fixes a previously reported crash")
    return "formerly" in lows or lows[:1] == ["previously"] or _habitual_used_to(lows, "be")


def asks_past(toks: list[Tok]) -> bool:
    """The question asks about the past: its first auxiliary is a past form ("Was it …", "Did it …")."""
    for t in toks:
        if t.low in _PAST_AUX:
            return True
        if t.low in ("is", "are", "does", "do", "has", "have", "can", "will", "should", "must"):
            return False
    return False


def exception_start(toks: list[Tok]) -> int | None:
    """Where an exception phrase opens ("except", "other than", "apart from", "excluding"), if any."""
    for k, t in enumerate(toks):
        if t.low in _EXCEPT_ONE:
            return k
        if k + 1 < len(toks) and (t.low, toks[k + 1].low) in _EXCEPT_TWO:
            return k
    return None


def excepted(toks: list[Tok], stems: set[str]) -> bool:
    """A question stem the clause states only inside its exception phrase: the clause says No of it."""
    start = exception_start(toks)
    if start is None:
        return False
    before = {s for t in toks[:start] for s in t.stems}
    after = {s for t in toks[start:] for s in t.stems}
    return any(s in after and s not in before for s in stems)


_ARTICLES = frozenset(["a", "an", "the", "any"])


def denied(toks: list[Tok], stems: set[str]) -> int:
    """How many times "without" denies one of `stems` as its object ("without a restart")."""
    count = 0
    for k, t in enumerate(toks):
        if t.low != "without":
            continue
        following = [x for x in toks[k + 1 : k + 4] if x.low not in _ARTICLES][:1]
        count += bool(following and following[0].stems & stems)
    return count


_UNIVERSAL = frozenset(["every", "all", "each"])
_CONDITION_AFTER_ONLY = frozenset(["if", "when", "after", "once", "provided"])


def universal(toks: list[Tok]) -> str:
    """The question's scope over a set: "every" when it asks about every member ("every UID", "all files",
    "each entry"), "any" when it asks whether any member may be chosen ("Can it have any GID?": free-choice
    "any" under a possibility modal; "Does it have any …?" is existential and asks nothing of every member),
    else ""."""
    lows = {t.low for t in toks}
    if lows & _UNIVERSAL:
        return "every"
    return "any" if "any" in lows and lows & POSSIBILITY else ""


_NECESSITY_TO = frozenset(["has", "have", "need", "needs"])


def necessity(toks: list[Tok]) -> bool:
    """The clause states what must be: "must", "has to", "need to", "required"."""
    lows = [t.low for t in toks]
    if "must" in lows or NECESSITY.intersection(lows):
        return True
    return any(a in _NECESSITY_TO and b == "to" for a, b in zip(lows, lows[1:], strict=False))


_PARTIAL = frozenset(["some", "most", "many", "few"])


def restricts(toks: list[Tok], sentence: list[Tok] | None = None, scope: str = "every") -> bool:
    """The clause limits its statement to some members: "only" that is not a condition ("only if"), or
    "not all" / "not every"; or its `sentence` does ("Some, but not all, instances have it", "Most …"); a free
    choice (`scope` "any") is limited by a necessity as well."""
    if scope == "any" and necessity(toks):
        return True
    lows = [t.low for t in toks]
    following = lows[1:] + [""]
    for word, after in zip(lows, following, strict=True):
        if word == "only" and after not in _CONDITION_AFTER_ONLY:
            return True
        if word == "not" and after in ("all", "every"):
            return True
    if sentence is None or not sentence:
        return False
    whole = [t.low for t in sentence]
    return whole[0] in _PARTIAL or any(
        a == "not" and b in ("all", "every") for a, b in zip(whole, whole[1:], strict=False)
    )


def turns(
    toks: list[Tok],
    stems: set[str],
    question_past: bool,
    question_universal: str = "",
    sentence: list[Tok] | None = None,
) -> int:
    """How many times the qualifiers of a clause turn its answer (added to its negation count); `sentence`:
    the whole sentence the clause is part of, for a quantifier that limits it ("Some, but not all, …")."""
    count = 1 if excepted(toks, stems) else 0
    if past_only(toks) and not question_past:
        count += 1
    if question_universal and restricts(toks, sentence, question_universal):
        count += 1
    return count


def only_if(toks: list[Tok]) -> bool:
    """The clause states a necessary condition ("only if", "only when", "only after")."""
    lows = [t.low for t in toks]
    return any(
        a == "only" and b in ("if", "when", "after", "once", "provided")
        for a, b in zip(lows, lows[1:], strict=False)
    )


_RECOMMENDATION_QUESTION = frozenset(["should", "shouldn't", "ought", "shall"])


def asks_recommendation(toks: list[Tok]) -> bool:
    """The yes/no question asks what one should do: it opens with "Should", "Ought", "Shall"."""
    return bool(toks) and toks[0].low in _RECOMMENDATION_QUESTION


def deontic(toks: list[Tok], imperative: bool) -> bool:
    """The sentence recommends, requires or commands: a command, or a word of deontic force."""
    return imperative or any(t.low in DEONTIC for t in toks)


_MORE = frozenset(["more", "greater", "larger", "longer", "higher", "bigger"])
_LESS = frozenset(["less", "fewer", "smaller", "shorter", "lower"])


def comparison(toks: list[Tok]) -> str | None:
    """The direction of a "… than" comparison the text makes ("more", "less"), if any."""
    for word, after in zip(toks, toks[1:], strict=False):
        if after.low == "than":
            if word.low in _MORE:
                return "more"
            if word.low in _LESS:
                return "less"
    return None


def compares_otherwise(question: list[Tok], sentence: list[Tok]) -> bool:
    """The sentence compares the other way than the question ("less than" for "more than")."""
    asked = comparison(question)
    said = comparison(sentence) if asked else None
    return said is not None and said != asked


def another_proposition(question: list[Tok], sentence: list[Tok], imperative: bool) -> bool:
    """The sentence states another proposition than the yes/no question asks: it compares the other way, or
    it lacks the deontic force a "Should …?" question asks for (`imperative`: its clause is a command)."""
    if compares_otherwise(question, sentence):
        return True
    return asks_recommendation(question) and not deontic(sentence, imperative)
