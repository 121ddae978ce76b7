"""Comparisons ("What is the difference between A and B?"): the sides named by the question, and the best
passage about each side."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import stems, terms

from .evidence import Scorer, Sentence
from .lexicon import LIGHT_STEMS
from .material import Material, Outcome
from .passages import EXTRA_SENTENCE_COST, Judge, Passage, windows
from .question import Question, content_terms, name_runs
from .render import passage_text
from .spans import completed

_SIDES = lazy_pattern(
    r"\b(?:between|compare|comparing|contrast|contrasting)\s+(?P<a>.+?)\s+(?:and|with|versus|vs\.?|to)\s+(?P<b>.+?)(?:[?.,;:]|$)"
    r"|(?P<c>[^,.;:?]+?)\s+(?:versus|vs\.?)\s+(?P<d>[^,.;:?]+)",
    re.I,
)
_FRAME_STEMS = frozenset(
    stems(
        [
            "compare",
            "contrast",
            "explain",
            "describe",
            "how",
            "why",
            "what",
            "which",
            "who",
            "analyze",
            "analyse",
        ]
    )
)


def compared_sides(text: str, pool: list[Sentence]) -> list[str]:
    """The entities a comparison question names: two multi-word proper names found in the evidence, else
    the 'between A and B' phrases, else the names."""
    vocab = {t for s in pool for t in s.terms}
    names: list[str] = []
    for phrase in name_runs(text):
        toks = [t for t in content_terms(phrase) if t not in _FRAME_STEMS]
        if toks and any(t in vocab for t in toks) and phrase not in names:
            names.append(phrase)
    if len(names) >= 2 and all(len(content_terms(n)) >= 2 for n in names[:2]):
        return names[:4]  # "Dr. Elara Vance and Commander Vex": the people compared
    quoted = [q for q in (m.group(2) for m in _QUOTED.finditer(text)) if content_terms(q)]
    if len(quoted) >= 2:
        return quoted[:4]  # "'Files A and B differ' and 'Binary files A and B differ'": quotes hold
    m = _SIDES.search(text)
    if m:
        a, b = (m["a"], m["b"]) if m["a"] else (m["c"], m["d"])
        if m["a"]:
            a, b = _coordinated_sides(text[m.start("a") : m.end("b")]) or (a, b)
        sides = [_strip_det(a), _strip_det(b)]
        if all(content_terms(s) for s in sides):
            return sides
    return names[:4]


_QUOTED = lazy_pattern(r"""(?<!\w)(['"‘“`])(.+?)(?:['"’”`])(?!\w)""")


def _coordinated_sides(phrase: str) -> tuple[str, str] | None:
    """ "building zstd with make and building it with cmake" → the two sides joined by "and" (not the
    "with" inside one): of several "and"s, the one after which the phrase starts as it started."""
    cuts = [m for m in re.finditer(r"\s+and\s+", phrase)]
    if not cuts:
        return None
    first = phrase.split(None, 1)[0].lower()
    parallel = [c for c in cuts if phrase[c.end() :].split(None, 1)[0].lower() == first]
    cut = (parallel or cuts)[0]
    return phrase[: cut.start()], phrase[cut.end() :]


def _strip_det(phrase: str) -> str:
    toks = phrase.strip().split()
    while toks and toks[0].lower() in ("the", "a", "an"):
        toks = toks[1:]
    return " ".join(toks)


def _sides_named(keys: list[set[str]], s: Sentence) -> list[int]:
    """The sides a sentence is about: those its own words name; only when they name none, those its
    context (heading, carried subject) names — a heading naming every side says nothing of one of them."""
    own = [k for k, ks in enumerate(keys) if ks & set(s.terms)]
    return own or [k for k, ks in enumerate(keys) if _names_side(ks, s)]


def _names_side(keys: set[str], s: Sentence) -> bool:
    """The sentence names the side: one of its key terms, a hyphenated one also as its words side by side
    ("full-icu" named by "full ICU support" in the heading)."""
    have = set(s.terms) | s.under | s.carried
    if keys & have:
        return True
    said = f"{s.text} {s.unit.heading}".lower()
    for k in keys:
        if "-" in k and k[0] != "-":
            parts = [re.escape(p) for p in k.split("-") if p]
            if len(parts) > 1 and re.search(r"\b" + r"[\s_-]*".join(parts), said):
                return True
    return False


_SIDE_KEY = lazy_pattern(r"\d|^-|\w-\w")


def compare(q: Question, m: Material) -> Outcome | None:
    """The best passage about each compared side, each labelled with its side, then what is said of both.
    A side named by an option, a code or a compound name ("-R flags", "X-Python-Version field") is about
    what names that."""
    if not q.compare:
        return None
    sides = compared_sides(q.text, m.pool)
    if len(sides) < 2 and q.context:
        sides = compared_sides(q.context.replace(";", ","), m.pool)
    if len(sides) < 2:
        return None
    side_terms = [set(terms(s)) for s in sides]
    shared = set.intersection(*side_terms)
    pool = m.pool + m.code if q.wants_code else m.pool
    keys = []
    for own_terms in side_terms:
        distinct = own_terms - shared or own_terms
        keys.append({t for t in distinct if _SIDE_KEY.search(t)} or distinct)
    named = [_sides_named(keys, s) for s in pool]
    blocks: list[str] = []
    ids: list[str] = []
    found = 0
    for k, (side, own_terms) in enumerate(zip(sides, side_terms, strict=True)):
        about = [s for s, hits in zip(pool, named, strict=True) if hits == [k]]
        others = set().union(*side_terms) - own_terms  # what names the other sides is no help here
        passage = _best_about(q, about, list(own_terms) + [t for t in q.terms if t not in shared | others])
        if passage is None or not _says_of(passage, own_terms | shared | set(q.terms)):
            blocks.append(f"**{side}**: the evidence says nothing specific about it.")
            continue
        found += 1
        passage = completed(passage, pool)
        text = passage_text(passage, side)
        unit = passage.sentences[0].unit
        if unit.kuType == "composite" and unit.title and not set(terms(unit.title)) <= set(terms(side)):
            text = f"{unit.title}: {text}"  # a section digest is read under its heading
        blocks.append(f"**{side}**: {text}")
        ids.extend(u for u in [passage.unit_id] if u not in ids)
    both = [s for s, hits in zip(pool, named, strict=True) if len(hits) >= 2]
    passage = _best_about(q, both, [t for t in q.terms]) if both else None
    if passage is not None:
        blocks.append(f"**Both**: {passage_text(completed(passage, both))}")
        ids.extend(u for u in [passage.unit_id] if u not in ids)
    if found == 0 and passage is None:
        return None
    conf = "high" if found == len(sides) else "low"
    # a side the evidence says nothing of is no comparison: the best candidate, reported as weak
    return Outcome(
        "\n\n".join(blocks), ids, conf, f"comparison of {', '.join(sides)}", "comparison", found == len(sides)
    )


def _says_of(passage: Passage, named: set[str]) -> bool:
    """The passage says something of a side beyond naming it and the question's words ("--skip-old-files.",
    "Use --safe." say nothing of it)."""
    return any(set(s.terms) - named - LIGHT_STEMS for s in passage.sentences)


def _best_about(q: Question, pool: list[Sentence], side_terms: list[str]) -> Passage | None:
    """The best short passage of `pool` about one side (scored on the side's and the question's terms):
    of equally good ones the earliest, two sentences rather than one (a side is described, not named)."""
    if not pool:
        return None
    scorer = Scorer(pool, side_terms, q.names, q.support, q.collection)
    judge = Judge(scorer, "", set())
    scored = [judge.score(w) for w in windows(pool) if len(w) <= 2]
    for p in scored:
        p.score += EXTRA_SENTENCE_COST * (len(p.sentences) - 1)
    scored.sort(key=lambda p: (-round(p.score, 6), p.sentences[0].order, -len(p.sentences)))
    return scored[0] if scored else None  # every sentence of the pool names the side
