"""Yes/No from the one sentence that states the question's proposition or its negation.

explicit.py answers when a clause states the proposition word for word in its grammatical shape; real
documents say it in other shapes ("the long option can be abbreviated" for "Can I abbreviate long
options?"). This reading is looser about the wording and strict about what a statement is:

- the proposition is the question's main clause ("Can I keep using my existing ssh-rsa keys"), without a
  clause that only sets the scene ("after OpenSSH 8.8 disabled RSA signatures");
- a sentence states it when it carries nearly all of the proposition's weighted terms itself (its heading
  or term may supply the subject), every key term among them;
- the clause that carries the predicate (the proposition's terms that are not names) must be about the
  question's subject: its own resolved subject names it ("Its jug holds 1.5 litres" is about the jug, not
  the T3; "The billing service depends on the ledger" is not about the ledger), unless the question asks
  about a generic person ("Can I …") or the clause has no subject of its own (a definition's description);
- a hedged clause ("may compress") answers "Possibly" (or "Possibly not"), quoted, and only when no plain
  statement answers; a sentence whose statement holds only under a condition ("If the disk fills up, …")
  states it only for a question about what is possible ("Can I …"), except a necessary condition
  ("only if …"), which answers "Only under a condition" and quotes it;
- qualifiers turn the answer like a negation (qualifiers.py): a past-only state ("formerly called"), an
  exception that names the question's term ("except the cache archives");
- a question about what a generic person does ("Can I change …") is stated only by a sentence that carries
  its verb: "The user name is fixed" shares the question's nouns but does not say whether it changes;
- the answer's polarity is the parity of negations in that clause against the question's own ("Isn't X
  …?"); statements of both polarities: no answer;
- asked about an action ("Can X keep …?"), a sentence carrying the asked verb outweighs one that shares only
  the other words, which it may take from the statement before it in its unit (polar_verb.py).
No sentence states it: no answer, never a guess.

A FAQ entry answers for itself (`entry_verdict`): when an entry's question asks the same proposition
and its answer opens with a bare "Yes." or "No.", that word is the answer and the sentence after it the
quote.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .clauses import (
    Clause,
    Subject,
    clause_subjects,
    conditioned,
    content_stems,
    is_negator,
    split_clauses,
    tokenize,
)
from .context_terms import unit_context
from .evidence import Scorer, Sentence
from .lexicon import AUX, NEGATIVE_VERBS, OPPOSITES, POSSIBILITY, PRONOUNS
from .polar_verb import main_verb, prior_terms
from .propositions import Claim, asks_advice, asks_passive, read_question
from .qualifiers import (
    another_proposition,
    asks_past,
    denied,
    only_if,
    turns,
    universal,
)
from .question import without_examples

MIN_STATED = 0.75  # weighted share of the proposition the sentence (with its context) states
MIN_OWN = 0.5  # ... and the sentence itself
_SCENE = lazy_pattern(
    r"[,]?\s+\b(?:after|before|since|when|whenever|while|once|because|although|though|even though|now that|"
    r"given that|until)\b.*$",
    re.I,
)
_FRAME = lazy_pattern(
    r"^\s*(?:is it (?:possible|safe|ok|okay|true|allowed|permitted|fine|acceptable) (?:to|that)\s+)", re.I
)
_PARENTHETICAL = lazy_pattern(r"\s*\([^()]{0,80}\)")
_HEDGES = frozenset(
    ["may", "might", "could", "would", "possibly", "perhaps", "probably", "likely", "unlikely"]
)
CONDITIONAL = "Only under a condition"  # the answer when the statement holds only if a condition does
HEDGED = {"Yes": "Possibly", "No": "Possibly not"}  # the answers a hedged statement ("may") gives


class PolarVerdict(msgspec.Struct):
    answer: str  # "Yes" | "No"
    sentence: Sentence
    stated: float
    verb_stated: bool = True  # the sentence carries the verb the question turns on (polar_verb.py)


def proposition(focus: str) -> str:
    """The main clause of a yes/no question, without a scene-setting subordinate clause nor the examples it
    gives ("Can fd find files with a multi-part extension such as tar.gz?" is stated by "Files with multiple
    extensions can be found")."""
    text = without_examples(focus.strip()).strip().rstrip("?").strip()
    text = _FRAME.sub("", text)
    main = _SCENE.sub("", text)
    return main if terms(main) else text


class _Clause(msgspec.Struct):
    negated: bool
    hedged: bool
    conditional: bool  # another clause of the sentence is a condition on it
    subject: set[str] | None  # stems of the clause's own (resolved) subject; None: it has none
    necessary: bool = False  # the condition is a necessary one ("only if")
    rest: frozenset[str] = frozenset()  # stems of the clause after its subject (its verb and object)


def _stating_clause(
    text: str,
    predicate: set[str],
    antecedent: Subject | None,
    subject: set[str] = frozenset(),
    question_past: bool = True,
    question_universal: str = "",
    reader_verb: str | None = None,
) -> _Clause | None:
    """The clause of `text` that carries most of the predicate stems, read for negation, hedging,
    conditions and its subject (which stops at the predicate's words, not at `subject`'s: "The preview
    server should not be exposed" keeps "preview server"). A parenthetical ("Linux (WSL) is not …") does
    not cut the clause; asked what a generic person does ("Should I send …?"), a command to the reader
    in a parenthetical that carries the asked verb (`reader_verb`) is the clause ("You may see warnings
    (please don't send these to …)"): a command answers such a question before a statement does."""
    for inner in _PARENTHETICAL.findall(text) if reader_verb else ():
        told = _stating_clause(inner.strip()[1:-1], predicate, antecedent, subject, question_past)
        if told is not None and told.subject == {"you"} and reader_verb in told.rest:
            return told
    text = _PARENTHETICAL.sub("", text)
    toks = tokenize(text)
    clauses = split_clauses(text, toks)
    said = predicate - subject or predicate  # what is said of the subject picks the clause
    subjects = clause_subjects(text, toks, clauses, antecedent, frozenset(said))
    best: tuple[int, int] | None = None
    for n, clause in enumerate(clauses):
        carried = sum(1 for t in clause.toks if t.stems & said)
        if carried and (best is None or carried > best[0]):
            best = (carried, n)
    if best is None:
        return None
    elided = _elided_for(clauses, subjects, best[1], subject)
    if elided is not None:  # "A may be stored there, but B may not": B's clause, with A's predicate
        best = (best[0], elided)
    clause = clauses[best[1]]
    ct = clause.toks
    negations = sum(
        1
        for k, t in enumerate(ct)
        if is_negator(t, ct[k + 1] if k + 1 < len(ct) else None) or t.low in NEGATIVE_VERBS
    )
    negations += turns(ct, predicate, question_past, question_universal, toks) + denied(
        ct, predicate
    )  # "formerly", "except", "without"
    hedged = any(t.low in _HEDGES for t in ct)
    conditional = conditioned(clauses, best[1])
    sub = subjects[best[1]]
    if sub.imperative:
        stems: set[str] | None = {"you"}
    elif not sub.toks or (sub.toks[0].low in PRONOUNS and not sub.resolved):
        stems = None
    else:
        stems = content_stems(sub.toks[sub.owner :]) or None
    rest = content_stems([t for t in ct if t not in sub.toks])
    if elided is not None:
        rest |= content_stems([t for t in clauses[elided - 1].toks if t not in subjects[elided - 1].toks])
    return _Clause(negations % 2 == 1, hedged, conditional, stems, only_if(toks), frozenset(rest))


def _elided_for(clauses: list[Clause], subjects: list[Subject], n: int, subject: set[str]) -> int | None:
    """The clause right after clause `n` that says the same of another subject with its verb phrase elided
    ("…, but system users may not"), when that subject is the question's and clause `n`'s is not: only an
    auxiliary or modal, maybe negated, follows its subject."""
    m = n + 1
    if not subject or m >= len(clauses) or clauses[m].lead not in ("but", "and", "while", "whereas"):
        return None
    toks = clauses[m].toks[1:]
    end = len(toks)
    while end and (toks[end - 1].low in AUX or toks[end - 1].low in ("not", "n't")):
        end -= 1
    if end == len(toks) or end == 0:
        return None  # no auxiliary at its end, or nothing before it
    own, theirs = content_stems(toks[:end]), content_stems(subjects[n].toks)
    return m if subject <= own and not subject <= theirs else None


def _antecedent(s: Sentence) -> Subject | None:
    name = s.unit.subject or s.unit.topic or ""
    toks = tokenize(name)
    return Subject(toks, text=name) if toks else None


def _about_subject(
    claim: Claim | None,
    clause: _Clause,
    context: set[str],
    own: set[str] | None = None,
    advice: bool = False,
    passive: bool = False,
) -> bool:
    """The stating clause is about the question's subject (asked for advice, a command names it in `own`, the
    sentence's terms; asked in the passive, the active clause's object is it: "… does not require a password")."""
    if claim is None or claim.generic:
        return True
    keys = claim.keys
    if not keys:
        return True
    if passive and keys & clause.rest and not (clause.subject and keys & clause.subject):
        return True
    if clause.subject is None:  # no subject of its own: a definition's description, about its term
        return keys <= context
    if "you" in clause.subject:  # a command states what the reader does, not what a thing does
        return advice and own is not None and keys <= own
    return bool(keys & clause.subject)


def verdict(
    focus: str,
    pool: list[Sentence],
    scorer_terms: dict[str, float],
    keys: set[str],
    names: set[str],
    context_name: str = "",
    unknown: frozenset[str] = frozenset(),
) -> PolarVerdict | None:
    """Yes/No from the sentence that best states the proposition, or None (see the module docstring).
    `context_name`: what the intent's Context says a pronoun subject ("Does it …") refers to; `unknown`: the
    question's words the collection never uses (read by truncation, `truncated`)."""
    main = proposition(focus)
    prop = proposition_terms(main, scorer_terms)
    if not prop:
        return None
    readings = read_question(main + "?") or []
    claim = readings[0] if readings else None
    if claim is not None and claim.pronoun:
        if not context_name:
            return None  # "Does it …?" with nothing to say what "it" is
        claim = Claim(tokenize(context_name), predicate=claim.predicate)
        readings = [claim]
    # readings run from the longest subject ("themes made") to the shortest ("themes"): the shortest
    # subject is the one the predicate surely does not hold
    subject = readings[-1].subject_stems if readings else set()
    words = {w.lower() for w in re.findall(r"[A-Za-z']+", main)}
    possibility = bool(words & POSSIBILITY)
    question_hedged = bool(words & (_HEDGES - POSSIBILITY))
    total = sum(scorer_terms[t] for t in prop)
    verb = _generic_verb(main) if claim is not None and claim.generic else None
    shortest = min(readings, key=lambda r: len(r.subject)) if readings else None
    gerunds = [r for r in readings if r.gerund]  # the verb follows the gerund phrase's shortest reading
    asked_verb = main_verb(main, min(gerunds, key=lambda r: len(r.subject)) if gerunds else shortest, prop)
    predicate = {t for t in prop if t not in names} or set(prop)
    question = _stating_clause(main, predicate, None)
    question_negated = question.negated if question else False
    main_toks = tokenize(main)
    question_past, question_universal = asks_past(main_toks), universal(main_toks)
    advice, passive = asks_advice(main), asks_passive(main)
    found: dict[str, PolarVerdict] = {}
    for s in pool:
        if s.code or s.text.rstrip().endswith("?"):
            continue
        own = truncated(set(s.terms) | s.carried, unknown)
        verb_stated = asked_verb is None or asked_verb in own
        if asked_verb is not None and verb_stated:
            # the asked verb's sentence goes on from the statement before it: the two state the proposition
            own = own | prior_terms(s, pool)
        context = own | s.under | unit_context(s)
        if not keys & set(prop) <= context or (verb is not None and verb not in own):
            continue
        stated = sum(scorer_terms[t] for t in prop if t in context) / total
        said = sum(scorer_terms[t] for t in prop if t in own) / total
        if stated < MIN_STATED or said < MIN_OWN:
            continue
        clause = _stating_clause(
            s.text, predicate, _antecedent(s), subject, question_past, question_universal, verb
        )
        if clause is None or another_proposition(main_toks, tokenize(s.text), clause.subject == {"you"}):
            continue  # "less than" for "more than"; no recommendation for "Should …?"
        if clause.conditional and not possibility and not clause.necessary:
            continue  # true only under a condition the question does not ask about
        around = set(s.under) | set(unit_context(s))
        if readings and not any(_about_subject(r, clause, around, own, advice, passive) for r in readings):
            continue
        answer = "Yes" if (clause.negated != _contrasts(main, s.text)) == question_negated else "No"
        if clause.conditional and not possibility:
            answer = CONDITIONAL if answer == "Yes" else "No"  # "only if": the condition is the answer
        elif clause.hedged and not question_hedged and not possibility:
            answer = HEDGED[answer]  # "may delete": possibly, said as the sentence says it
        best = found.get(answer)
        if best is None or (verb_stated, stated, -len(s.text)) > (
            best.verb_stated,
            best.stated,
            -len(best.sentence.text),
        ):
            found[answer] = PolarVerdict(answer, s, stated, verb_stated)
    # a plain statement outweighs a hedged or conditional one; of either kind, both polarities: no answer
    # a sentence that carries the asked verb outweighs one that shares only the proposition's other words
    found = {a: v for a, v in found.items() if v.verb_stated} or found
    for kind in (("Yes", "No"), (CONDITIONAL,), tuple(HEDGED.values())):
        stated_here = [found[a] for a in kind if a in found]
        if stated_here:
            return stated_here[0] if len(stated_here) == 1 else None
    return None


MIN_TRUNCATION = 5  # letters of a word the collection never uses that another word must begin with


def truncated(said: set[str], unknown: frozenset[str]) -> set[str]:
    """`said` with the question's words the collection never uses that begin one of its stems ("multi" of
    "multi-part" in "multipl"): right-truncation, for a word no document spells as the question does."""
    found = {u for u in unknown if len(u) >= MIN_TRUNCATION and any(t.startswith(u) for t in said)}
    return said | found if found else said


_GENERIC_SUBJECT = lazy_pattern(
    r"^\s*\w+(?:\s+not)?\s+(?:i|we|you|one|someone|anyone|users?)\s+(?P<verb>[a-z]\w*)", re.I
)


_ASPECTUAL = frozenset(["keep", "continue", "start", "begin", "stop", "resume"])
_ASPECT_BEFORE_GERUND = lazy_pattern(r"\b(?:keep|continue|start|begin|stop|resume)(?=\s+\w+ing\b)", re.I)


def proposition_terms(main: str, scorer_terms: dict[str, float]) -> list[str]:
    """The proposition's weighted terms; "keep" of "keep using" says how long, not what: the gerund counts."""
    return [t for t in dict.fromkeys(terms(_ASPECT_BEFORE_GERUND.sub(" ", main))) if t in scorer_terms]


def _generic_verb(main: str) -> str | None:
    """The verb stem of "Can I change …"; of "Can I keep using …" the verb kept on ("use"); None when it
    is not there to read."""
    m = _GENERIC_SUBJECT.match(main)
    if m is None:
        return None
    verb = m["verb"]
    after = main[m.end() :].split()
    if verb.lower() in _ASPECTUAL and after and after[0].lower().endswith("ing"):
        verb = after[0]
    found = terms(verb)
    return found[0] if found else None


_BARE = lazy_pattern(r"^\s*(?P<word>yes|no)\s*[.!,]?\s*$", re.I)
MIN_SAME_QUESTION = 0.5  # share of the entry's own question the asked one repeats


def entry_verdict(
    focus: str, pool: list[Sentence], scorer_terms: dict[str, float], keys: set[str]
) -> PolarVerdict | None:
    """Yes/No from a FAQ entry that asks the same proposition and answers it with a bare "Yes."/"No."; the
    sentence after that word is the quote. Entries of both answers: no verdict."""
    main = proposition(focus)
    prop = [t for t in dict.fromkeys(terms(main)) if t in scorer_terms]
    total = sum(scorer_terms[t] for t in prop)
    if not prop or total <= 0:
        return None
    negated = _negated(main)
    following = {(x.unit.id, x.order): x for x in pool}
    found: dict[str, PolarVerdict] = {}
    for s in pool:
        bare = _BARE.match(s.text)
        title = (s.unit.title or "").strip()
        if bare is None or not title.endswith("?"):
            continue
        asked = proposition(title)
        own = set(terms(asked))
        share = sum(scorer_terms[t] for t in prop if t in own) / total
        repeated = len(own & set(prop)) / len(own) if own else 0.0
        if not keys <= own or share < MIN_STATED or repeated < MIN_SAME_QUESTION:
            continue
        quote = following.get((s.unit.id, (s.order[0], s.order[1], s.order[2] + 1)))
        if quote is None:
            continue
        word = bare["word"].capitalize()
        if _negated(asked) != negated:  # "Can't I …?" answered "No." means the opposite of "Can I …?"
            word = "No" if word == "Yes" else "Yes"
        found.setdefault(word, PolarVerdict(word, quote, share))
    return next(iter(found.values())) if len(found) == 1 else None


def _negated(question: str) -> bool:
    toks = tokenize(question.replace("\u2019", "'"))
    return (
        sum(1 for k, t in enumerate(toks) if is_negator(t, toks[k + 1] if k + 1 < len(toks) else None)) % 2
        == 1
    )


def term_weights(scorer: Scorer) -> dict[str, float]:
    """term -> weight of the scorer's question terms (a multi-word name's parts each carry its weight)."""
    out: dict[str, float] = {}
    for parts, weight, _present in scorer.groups:
        for t in parts:
            out[t] = weight
    return out


def _contrasts(question: str, sentence: str) -> bool:
    """One asks of a predicate and the other says its opposite: the same / different, required / optional."""
    asked, said = {t.low for t in tokenize(question)}, {t.low for t in tokenize(sentence)}
    return any(asked & x and said & y and not said & x for a, b in OPPOSITES for x, y in ((a, b), (b, a)))
