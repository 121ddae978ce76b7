"""Query-side spelling variants: a question term the collection never holds read as the collection's own
spelling of it ("licence" asked of documents that write "license", "colour" of "color", "catalogue" of
"catalog"), in the manner of IR query spelling correction against the index's vocabulary.

Only a term the collection does not hold is read so, and only when the reading is safe: the term is a word
of at least `MIN_VARIANT_LENGTH` letters (a short word has too many neighbours: "form" / "from"), the
variant is one edit away (a letter left out, added, changed, or two swapped), keeps the term's first
`SHARED_PREFIX` letters (spellings of one word differ in its ending, -our/-or, -ce/-se, -re/-er, -ogue/-og:
"trail" is not read as "trial", nor "patch" as "path"), and is frequent in the collection
(held by at least `MIN_VARIANT_DF` units: one stray typo of a document is no spelling of it). Among several
such variants the most frequent is taken. No word list: the collection's vocabulary is the only dictionary.

The kb-plugins decide the variants (they hold the index) and report them (`TermVariants`, "licenc=licens");
a goal solver reads the question re-spelt in the documents' way (`respell`), so every part of its reading
(keys, focus, the words the documents never use) meets the documents' word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from string import ascii_lowercase

from .analysis import WORD_PATTERN, terms

MIN_VARIANT_LENGTH = 5  # letters of the asked term (as the analyser spells it, a stem)
SHARED_PREFIX = 4  # first letters an edit never touches
MIN_VARIANT_DF = 2  # units of the collection that must hold the variant


def edits(term: str) -> Iterator[str]:
    """The strings one edit from `term` (deletion, insertion, substitution, adjacent transposition) that
    keep its first `SHARED_PREFIX` letters."""
    head, n = SHARED_PREFIX, len(term)
    for i in range(head, n + 1):
        left, right = term[:i], term[i:]
        for c in ascii_lowercase:
            yield left + c + right  # insertion
        if right:
            yield left + right[1:]  # deletion
            for c in ascii_lowercase:
                if c != right[0]:
                    yield left + c + right[1:]  # substitution
            if len(right) > 1 and right[0] != right[1]:
                yield left + right[1] + right[0] + right[2:]  # transposition


def eligible(term: str) -> bool:
    """Whether a term may be read as a spelling variant at all: a plain word, long enough."""
    return len(term) >= MIN_VARIANT_LENGTH and term.isascii() and term.isalpha() and term.islower()


def spelling_variant(term: str, df: Callable[[str], int]) -> str:
    """The collection's spelling of a term it does not hold (`df`: how many units hold a term), "" when none
    is safe (see the module docstring). The caller checks that the term itself is not held."""
    if not eligible(term):
        return ""
    best, best_df = "", MIN_VARIANT_DF - 1
    for candidate in sorted(set(edits(term))):
        count = df(candidate)
        if count > best_df:
            best, best_df = candidate, count
    return best


def spelling_variants(asked: Iterable[str], df: Callable[[str], int]) -> dict[str, str]:
    """asked term -> the collection's spelling, for each asked term the collection does not hold."""
    out: dict[str, str] = {}
    for term in asked:
        if eligible(term) and df(term) == 0 and (variant := spelling_variant(term, df)):
            out[term] = variant
    return out


def format_term_variants(variants: dict[str, str]) -> str:
    """`TermVariants` text: "asked=held" pairs joined by "; " (terms as the analyser spells them)."""
    return "; ".join(f"{a}={h}" for a, h in variants.items() if eligible(a) and h.isalpha())


def parse_term_variants(text: str) -> dict[str, str]:
    """The pairs of a `TermVariants` text; malformed pairs are skipped."""
    out: dict[str, str] = {}
    for pair in text.split(";"):
        asked, sep, held = pair.strip().partition("=")
        if sep and eligible(asked) and held.isalpha():
            out[asked] = held
    return out


def _respelt_word(word: str, asked: str, held: str) -> str:
    """A spelling of `word` (whose term is `asked`) whose term is `held`: the word's ending kept on the held
    stem ("licence" -> "license", "colours" -> "colors"), else the held stem itself."""
    low = word.lower()
    ending = low[len(asked) :] if low.startswith(asked) else ""
    for form in (held + ending, held):
        if terms(form) == [held]:
            return form.capitalize() if word[:1].isupper() else form
    return word


def respell(text: str, variants: dict[str, str]) -> str:
    """`text` with each word whose term is an asked variant spelt as the collection spells it."""
    if not variants or not text:
        return text

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        found = terms(word)
        if len(found) == 1 and found[0] in variants:
            return _respelt_word(word, found[0], variants[found[0]])
        return word

    return WORD_PATTERN.sub(one, text)
