"""Shared text utilities for plugins: tokens, stopwords, stems, sentences (generic glue, no retrieval logic)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from .lexicon import IRREGULAR

# A word: letters/digits, with inner hyphens and apostrophes ("state-of-the-art", "Bob's").
WORD_PATTERN = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
# A Markdown list marker ("- ", "* ", "+ ", "• ", "1. ", "2) ") opening a line: every item is a sentence.
_LIST_MARKER = r"(?:[-*+•]|\d{1,3}[.)])[ \t]+"
_SENTENCE_END = re.compile(
    r"(?P<hard>\n\s*\n|\n[ \t]*" + _LIST_MARKER + r")|(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])"
)
_LEADING_MARKER = re.compile(_LIST_MARKER)
_ABBREVIATIONS = frozenset(
    ["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "fig", "no", "vol", "approx", "inc", "ltd", "co", "corp", "dept", "est", "cmdr", "gen", "lt", "col", "capt", "sgt"]
)  # fmt: skip

STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me", "more", "most", "mustn't", "my", "myself", "no", "nor", "not", "of", "off", "on", "now", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's", "whom", "why", "why's", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves", "also", "just", "may", "might", "must", "shall", "will", "would", "could", "should", "does", "did", "one", "ones", "thing", "things", "get", "got", "us"]
)  # fmt: skip


_WRAPPED_PATH = re.compile(r"(?<=[\w.-]/)[ \t]*\n[ \t]*(?=[\w.~-])")


def collapse(text: str) -> str:
    """Whitespace collapsed to single spaces; a path hard-wrapped after a slash ("/usr/lib/" at a line's
    end, "python3/dist-packages" on the next) is joined back without a space."""
    if "/\n" in text or "/ \n" in text:
        text = _WRAPPED_PATH.sub("", text)
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; inner hyphens and apostrophes kept)."""
    return [w.lower().replace("’", "'") for w in WORD_PATTERN.findall(text)]


def iter_words(text: str) -> Iterator[str]:
    """`words`, one at a time (for a check that can stop early)."""
    for m in WORD_PATTERN.finditer(text):
        yield m.group(0).lower().replace("’", "'")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball stemmers in C

    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def stems(tokens: list[str]) -> list[str]:
    return _stemmer().stemWords(tokens)


# A short command-line option ("-f", "-R", "-3"): kept whole, case and dash included, as one term (its
# letter alone would be dropped as a single character, and "-r" and "-R" are different options).
_SHORT_OPTION = r"(?<![\w-])-[^\W_](?![\w-])"
# A dotted version or number ("10.1", "6.0.28"): one term, plus its major number ("GCC 10" finds "10.1").
_VERSION = r"(?<![\w.])\d+(?:\.\d+)+(?![\d])"
TERM_TOKEN = re.compile(_SHORT_OPTION + "|" + _VERSION + "|" + WORD_PATTERN.pattern, re.UNICODE)
_KEPT_LETTERS = frozenset("BCDEFGHJKLMNOPQRSTUVWXYZ")  # "an M suffix", "the C API"; not "I" or "A"


def _content_word(token: str) -> str | None:
    """A raw token as a lower-cased content word (possessive dropped), or None for stopwords and single
    characters other than a digit ("exit status 2") or a capital letter that names something ("M")."""
    word = token.lower().replace("’", "'")
    if word in STOPWORDS:
        return None
    if len(word) < 2 and not (word.isdigit() or token in _KEPT_LETTERS):
        return None
    return word[:-2] if word.endswith("'s") else word


def content_words(text: str) -> list[str]:
    """Words that carry meaning: lower-cased, stopwords and single characters (but digits and capital
    letters other than I and A) dropped."""
    return [c for c in map(_content_word, WORD_PATTERN.findall(text)) if c is not None]


_TERMS_CACHE: dict[str, tuple[str, ...]] = {}
_TERMS_CACHE_MAX = 500_000  # distinct raw tokens; cleared when full


def _token_terms(token: str) -> tuple[str, ...]:
    """The terms of one raw token: a short option as it is; else its content word without apostrophes,
    plus its hyphen parts, stemmed."""
    if token[0] == "-":
        return (token,)
    if token[0].isdigit() and "." in token:
        return (token, token.split(".", 1)[0])
    word = _content_word(token)
    if word is None:
        return ()
    word = IRREGULAR.get(word, word)  # "sent" is "send": a stemmer cannot tell
    expanded = [word.replace("'", "")]
    if "-" in word:
        expanded.extend(hyphen_parts(word))
    return tuple(stems(expanded))


def hyphen_parts(word: str) -> list[str]:
    """The parts a hyphenated word also yields: its content words, and a digit beside a word ("0-based"
    says "0"); a range of numbers ("1-2") stays one word."""
    parts = word.split("-")
    numbers = all(p.isdigit() for p in parts)
    return [p for p in parts if (len(p) > 1 or (p.isdigit() and not numbers)) and p not in STOPWORDS]


def terms(text: str) -> list[str]:
    """Stemmed content words: the unit of lexical matching. Hyphenated words also yield their parts; a
    short option ("-f") is one term.

    Every token is analysed on its own, so token -> terms is cached (kb ingest analyses millions of units).
    """
    cache = _TERMS_CACHE
    out: list[str] = []
    for token in TERM_TOKEN.findall(text):
        found = cache.get(token)
        if found is None:
            if len(cache) >= _TERMS_CACHE_MAX:
                cache.clear()
            found = cache[token] = _token_terms(token)
        out.extend(found)
    return out


_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")  # [text](url), ![alt](src)
_URL = re.compile(r"<?\b(?:https?|ftp)://[^\s<>]+>?|<[^\s<>@]+@[^\s<>]+>")


def plain_text(text: str) -> str:
    """Text as words to match: a Markdown link reads as its text, a bare URL or mail address as nothing
    (the path of a link, "nodejs/node/blob/v19.x", would repeat words the reader never sees)."""
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "://" in text or "@" in text:
        text = _URL.sub(" ", text)
    return text


# Comparison notation and the words that name it: "GCC >= 10.1" states a minimum, "up to 4" a maximum.
# Matched on word tokens, not one regex of alternatives (which costs ~20 µs a sentence: it tries every
# branch at every position); kb ingest and gs-symbolic read every sentence through this.
_NOTATION_SIGNS = {"minimum": (">=", "≥", "=>"), "maximum": ("<=", "≤", "=<")}
_NOTATION_PHRASES: dict[str, tuple[str, ...]] = {
    "minimum": (
        "at least",
        "or newer",
        "or later",
        "or higher",
        "or above",
        "or greater",
        "or more",
        "no less than",
        "no fewer than",
        "and later",
        "and newer",
        "and higher",
        "and above",
        "and up",
        "onwards",
        "onward",
        "lowest",
        "smallest",
        "least",
        "fewest",
        "minimal",
        "min",
    ),
    "maximum": (
        "at most",
        "up to",
        "or older",
        "or earlier",
        "or lower",
        "or below",
        "or less",
        "or fewer",
        "no more than",
        "and earlier",
        "and older",
        "and below",
        "highest",
        "largest",
        "biggest",
        "greatest",
        "maximal",
        "max",
        "upper limit",
    ),
}
# first word -> (the words after it, kind), longest first
_PHRASE_STARTS: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _kind, _phrases in _NOTATION_PHRASES.items():
    for _phrase in _phrases:
        _first, *_rest = _phrase.split()
        _PHRASE_STARTS.setdefault(_first, []).append((tuple(_rest), _kind))
for _starts in _PHRASE_STARTS.values():
    _starts.sort(key=lambda item: -len(item[0]))
EXTREMES = frozenset({"minimum", "maximum"})  # the terms notation_terms gives (stems of themselves)
_NOTATION_TERMS: dict[str, str] = {}


def _notation_kinds(text: str) -> set[str]:
    kinds = {kind for kind, signs in _NOTATION_SIGNS.items() if any(sign in text for sign in signs)}
    tokens = words(text)
    for i, token in enumerate(tokens):
        for rest, kind in _PHRASE_STARTS.get(token, ()):
            if tuple(tokens[i + 1 : i + 1 + len(rest)]) == rest:
                kinds.add(kind)
                break
    return kinds


def notation_terms(text: str) -> list[str]:
    """The terms of the comparisons a text states in notation or set phrases ("GCC >= 10.1" → minimum),
    so a question in words ("the minimum GCC version") matches it."""
    kinds = _notation_kinds(text)
    out = []
    for word in ("minimum", "maximum"):
        if word in kinds:
            found = _NOTATION_TERMS.get(word)
            if found is None:
                found = _NOTATION_TERMS[word] = stem(word)
            out.append(found)
    return out


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of text[start:end], whitespace trimmed.

    Splits after . ! ? followed by space and a capital/digit, at blank lines and before each Markdown
    list item (whose marker is left out); does not split after common abbreviations ("Dr.", "e.g.") or
    single initials.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END.finditer(text, start, end):
        piece_end = match.start()
        before = text[cursor:piece_end].rstrip()
        last_word = before.rsplit(None, 1)[-1].rstrip(".").lstrip("([\"'“‘").lower() if before.strip() else ""
        soft_break = match.group("hard") is None
        hard = match.group("hard") or ""
        number = hard.strip()[:-1]
        if len(number) >= 3 and number.isdigit() and before and before[-1] not in ".:!?;":
            continue  # "… a multiple of\n512. It can …": a wrapped number, not a numbered item
        numero = last_word == "no" and not text[match.end() : match.end() + 1].isdigit()
        if soft_break and (
            (last_word in _ABBREVIATIONS and not numero)  # "No. 5" abbreviates; "No. The …" answers
            or (len(last_word) == 1 and last_word.isalpha())
            or _LEADING_MARKER.fullmatch(before.strip() + " ") is not None  # "1. Install": a list number
        ):
            continue
        _append_trimmed(text, cursor, piece_end, spans)
        cursor = match.end()
    _append_trimmed(text, cursor, end, spans)
    return spans


def trim_span(text: str, a: int, b: int) -> tuple[int, int]:
    """(a, b) narrowed so that text[a:b] has no leading or trailing whitespace (a == b if all blank)."""
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def _append_trimmed(text: str, a: int, b: int, spans: list[tuple[int, int]]) -> None:
    a, b = trim_span(text, a, b)
    marker = _LEADING_MARKER.match(text, a, b)  # the first item of a list
    if marker is not None:
        a = marker.end()
    if b > a:
        spans.append((a, b))


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


# --------------------------------------------------------------------------- Markdown pieces

# Markdown line shapes, shared with sd-symbolic's block parser (plugins/sd_symbolic/source_units/blocks.py).
FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a row with its outer pipes
TABLE_SEP = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*\|?\s*$")  # |---|:--:|
_JSON_KEY = re.compile(r'^"[^"\n]{1,80}"\s*:')
_MD_LINK = re.compile(r"^!?\[[^\]\n]+\]\([^)\n]*\)")
_BOX_DRAWING = re.compile(r"[\u2500-\u257f]{2}|[├└┌┐┘│]")  # a tree or box diagram ("├── src/")


def table_cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def table_row_text(cells: list[str], header: list[str] | None) -> str:
    """A table row read as a statement: "sd-symbolic — Description: Rule-based …; Uses LLM: No"."""
    if not any(cells):
        return ""
    if not header or len(header) != len(cells):
        return " — ".join(c for c in cells if c)
    cells = [c.rstrip(".") for c in cells]  # "…input.; Uses LLM: No" reads as "…input; Uses LLM: No"
    first, rest = cells[0], [f"{h}: {c}" if h else c for h, c in zip(header[1:], cells[1:], strict=True) if c]
    return f"{first} — {'; '.join(rest)}" if first and rest else (first or "; ".join(rest))


def looks_like_code(text: str) -> bool:
    """A line of code or data (a JSON key, an object literal, a block opener, a tree or box diagram)
    rather than prose."""
    stripped = text.strip().rstrip(".")
    if not stripped:
        return False
    if _MD_LINK.match(stripped):
        return False  # "[The guide](guide.md) explains it": prose that opens with a link
    return (
        stripped[0] in "{[}]<"
        or stripped.endswith(("{", "[", "(", "=>", "};", "},", "],"))
        or (stripped.endswith(";") and any(ch in stripped for ch in "=(){}"))  # a statement, not prose
        or _JSON_KEY.match(stripped) is not None
        or _BOX_DRAWING.search(stripped) is not None
    )


def markdown_pieces(text: str, header: list[str] | None = None) -> list[tuple[str, str]]:
    """(text, kind) pieces of a Markdown text in reading order, kind one of sentence | row | code.

    A fenced code block is one `code` piece (its fences left out) and a line that reads as code or data
    is a `code` piece; each table row is a `row` read as a statement with its column names (the first
    row of a table is its header, separator rows are dropped; `header` names the columns of rows that
    come without one); the rest is split into sentences (`sentence_spans`).
    """
    out: list[tuple[str, str]] = []
    lines = text.split("\n")
    prose: list[str] = []

    def flush() -> None:
        if prose:
            body = "\n".join(prose)
            for a, b in sentence_spans(body):
                piece = body[a:b]
                out.append((piece, "code" if looks_like_code(piece) else "sentence"))
            prose.clear()

    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            flush()
            j = i + 1
            while j < n and not lines[j].lstrip().startswith(fence.group(1)[:3]):
                j += 1
            code = "\n".join(lines[i + 1 : j]).strip()
            if code:
                out.append((code, "code"))
            i = j + 1
            continue
        if TABLE_ROW.match(line) or (line.count("|") >= 2 and i + 1 < n and TABLE_SEP.match(lines[i + 1])):
            flush()
            j = i
            rows: list[list[str]] = []
            separated = False
            # rows may leave out the outer pipes (claims carry no separator row to tell)
            while j < n and lines[j].strip() and (lines[j].count("|") >= 2 or TABLE_SEP.match(lines[j])):
                if TABLE_SEP.match(lines[j]):
                    separated = True
                else:
                    rows.append(table_cells(lines[j]))
                j += 1
            columns = header
            if rows and (rows[0] == header or (header is None and (len(rows) > 1 or separated))):
                columns, rows = rows[0], rows[1:]
            for cells in rows:
                row = table_row_text(cells, columns)
                if row:
                    out.append((row, "row"))
            i = j
            continue
        if looks_like_code(line):
            flush()
            out.append((line.strip(), "code"))
        else:
            prose.append(line)
        i += 1
    flush()
    return out
