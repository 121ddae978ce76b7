"""Shared text utilities for plugins: tokens, stopwords, stems, sentences (generic glue, no retrieval logic)."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])|\n\s*\n")
_ABBREVIATIONS = frozenset(
    ["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "fig", "no", "vol", "approx", "inc", "ltd", "co", "corp", "dept", "est", "cmdr", "gen", "lt", "col", "capt", "sgt"]
)

STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me", "more", "most", "mustn't", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's", "whom", "why", "why's", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves", "also", "just", "may", "might", "must", "shall", "will", "would", "could", "should", "does", "did", "one", "ones", "thing", "things", "get", "got", "us"]
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; inner hyphens and apostrophes kept)."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball stemmers in C

    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def stems(tokens: list[str]) -> list[str]:
    return _stemmer().stemWords(tokens)


def content_words(text: str) -> list[str]:
    """Words that carry meaning: lower-cased, stopwords and single characters dropped."""
    out = []
    for w in words(text):
        if w in STOPWORDS or len(w) < 2:
            continue
        if w.endswith("'s"):
            w = w[:-2]
        out.append(w)
    return out


def terms(text: str) -> list[str]:
    """Stemmed content words: the unit of lexical matching. Hyphenated words also yield their parts."""
    base = content_words(text)
    expanded: list[str] = []
    for w in base:
        expanded.append(w.replace("'", ""))
        if "-" in w:
            expanded.extend(p for p in w.split("-") if len(p) > 1 and p not in STOPWORDS)
    return stems(expanded)


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of text[start:end], whitespace trimmed.

    Splits after . ! ? followed by space and a capital/digit, and at blank lines; does not split after
    common abbreviations ("Dr.", "e.g.") or single initials.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END.finditer(text, start, end):
        piece_end = match.start()
        before = text[cursor:piece_end].rstrip()
        last_word = before.rsplit(None, 1)[-1].rstrip(".").lower() if before.strip() else ""
        soft_break = "\n\n" not in match.group(0).replace(" ", "")
        if soft_break and (last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha())):
            continue
        _append_trimmed(text, cursor, piece_end, spans)
        cursor = match.end()
    _append_trimmed(text, cursor, end, spans)
    return spans


def _append_trimmed(text: str, a: int, b: int, spans: list[tuple[int, int]]) -> None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if b > a:
        spans.append((a, b))


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]
