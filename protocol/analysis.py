"""The term analysis every side of the protocol shares: a text's stemmed content words (`terms`).

The kernel analyses each unit of an ingested source once with it (protocol/handoff.py) and hands the terms
to the kb-plugins with the units; plugins import it through `mrpvm.plugins.sdk.text`. Pure Python plus
PyStemmer (Snowball, in C). Changing what `terms` returns changes `ANALYSER` (protocol/handoff.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

# Irregular past forms → base form, so "Did Elara flee" meets "Elara fled" and "send" meets "sent" (stems cannot do that).
_IRREGULAR_TEXT = """
bought:buy brought:bring built:build caught:catch chose:choose chosen:choose came:come dug:dig drove:drive
driven:drive ate:eat eaten:eat fell:fall fallen:fall felt:feel found:find flew:fly flown:fly forgot:forget
forgotten:forget froze:freeze frozen:freeze gave:give given:give went:go gone:go grew:grow grown:grow hid:hide
hidden:hide held:hold kept:keep knew:know known:know led:lead lost:lose made:make met:meet paid:pay
rode:ride ridden:ride rose:rise risen:rise ran:run said:say saw:see seen:see sold:sell sent:send shook:shake
shaken:shake shot:shoot sat:sit slept:sleep spoke:speak spoken:speak spent:spend stood:stand stole:steal
stolen:steal swam:swim swum:swim took:take taken:take taught:teach told:tell thought:think threw:throw
thrown:throw understood:understand woke:wake woken:wake wore:wear worn:wear won:win wrote:write written:write
began:begin begun:begin broke:break broken:break drew:draw drawn:draw drank:drink drunk:drink fought:fight
heard:hear lent:lend meant:mean sought:seek sang:sing sung:sing sank:sink sunk:sink struck:strike became:become
borne:bear bitten:bite blew:blow blown:blow dealt:deal fled:flee forbade:forbid
forbidden:forbid forgave:forgive forgiven:forgive hung:hang rang:ring rung:ring
slid:slide spun:spin stuck:stick stung:sting swore:swear sworn:swear swept:sweep swung:swing tore:tear
torn:tear wove:weave woven:weave wept:weep withdrew:withdraw withdrawn:withdraw chosen:choose arose:arise
arisen:arise awoke:awake fed:feed fled:flee froze:freeze overcame:overcome overcome:overcome
shone:shine shrank:shrink shrunk:shrink spoke:speak sprang:spring sprung:spring strove:strive
undertook:undertake undertaken:undertake upheld:uphold
"""
IRREGULAR: dict[str, str] = dict(pair.split(":") for pair in _IRREGULAR_TEXT.split())

# Gradable adjectives: "the largest message" meets "How large can …" (a stemmer keeps "largest" apart).
_GRADABLE = """
big small large long short high low fast slow quick old new young early late wide narrow deep shallow heavy
light cheap easy hard safe strong weak close near tall thin thick fine simple busy quiet loud hot cold warm
cool dense rare clean dry wet soft tight loose great full fresh rich poor sharp smooth steep strict
"""


def _graded(base: str) -> tuple[str, str]:
    """(comparative, superlative) of a regular adjective: large → larger, largest; big → bigger; easy → easier."""
    if base.endswith("e"):
        return base + "r", base + "st"
    if base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ier", base[:-1] + "iest"
    if len(base) <= 4 and base[-1] not in "aeiouwy" and base[-2] in "aeiou" and base[-3] not in "aeiou":
        return base + base[-1] + "er", base + base[-1] + "est"  # big → bigger, hot → hotter, wet → wetter
    return base + "er", base + "est"


for _base in _GRADABLE.split():
    for _form in _graded(_base):
        IRREGULAR.setdefault(_form, _base)

# A word: letters/digits, with inner hyphens and apostrophes ("state-of-the-art", "Bob's").
WORD_PATTERN = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)


STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me", "more", "most", "mustn't", "my", "myself", "no", "nor", "not", "of", "off", "on", "now", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's", "whom", "why", "why's", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves", "also", "just", "may", "might", "must", "shall", "will", "would", "could", "should", "does", "did", "one", "ones", "thing", "things", "get", "got", "us"]
)  # fmt: skip


_WRAPPED_PATH = re.compile(r"(?<=[\w.-]/)[ \t]*\n[ \t]*(?=[\w.~-])")
# A word a formatter hyphenated at a line's end: groff and mandoc write U+2010 HYPHEN ("redi‐" / "rected")
_HYPHENATED = re.compile(r"(?<=\w)\u2010[ \t]*\n[ \t]*(?=[a-z])")


def collapse(text: str) -> str:
    """Whitespace collapsed to single spaces; a path hard-wrapped after a slash ("/usr/lib/" at a line's
    end, "python3/dist-packages" on the next) and a word a formatter hyphenated across lines are joined
    back without a space."""
    if "/\n" in text or "/ \n" in text:
        text = _WRAPPED_PATH.sub("", text)
    if "\u2010" in text:
        text = _HYPHENATED.sub("", text)
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; inner hyphens and apostrophes kept)."""
    if text.isascii():  # lowering ASCII moves no token boundary: lower once, not per token
        return WORD_PATTERN.findall(text.lower())
    return [w.lower().replace("’", "'") for w in WORD_PATTERN.findall(text)]


def iter_words(text: str) -> Iterator[str]:
    """`words`, one at a time (for a check that can stop early)."""
    for m in WORD_PATTERN.finditer(text):
        yield m.group(0).lower().replace("’", "'")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # type: ignore[import-not-found]  # PyStemmer: Snowball stemmers in C (no stubs)

    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def stems(tokens: list[str]) -> list[str]:
    return _stemmer().stemWords(tokens)


# A short command-line option ("-f", "-R", "-3"): kept whole, case and dash included, as one term (its
# letter alone would be dropped as a single character, and "-r" and "-R" are different options).
_SHORT_OPTION = r"-(?<![\w-]-)[^\W_](?![\w-])"
# A dotted version or number ("10.1", "6.0.28"): one term, plus its major number ("GCC 10" finds "10.1").
_VERSION = r"\d(?<![\w.]\d)\d*(?:\.\d+)+(?![\d])"
# A printf-style conversion ("%e", "%X", "%6.2f", "%-5d"): kept whole, case included, as one term, as a short
# option is (its letter alone would be dropped, and "%x" and "%X" are different conversions); a percentage
# ("50%", "100% done") is none: a "%" after a word character opens no conversion.
_CONVERSION = r"%(?<![\w%]%)[-+#0]?\d*(?:\.\d+)?[A-Za-z](?!\w)"
CONVERSION = re.compile(_CONVERSION)
# Each alternative opens with a character, the look at the one before it coming after it ("-" not after a
# word character or a dash; a digit not after one or a dot): the regex engine then skips at C speed the
# places where no token starts (findall 2x faster than with the look-behind first; the same tokens).
TERM_TOKEN = re.compile(
    _SHORT_OPTION + "|" + _CONVERSION + "|" + _VERSION + "|" + WORD_PATTERN.pattern, re.UNICODE
)
_KEPT_LETTERS = frozenset("BCDEFGHJKLMNOPQRSTUVWXYZ")  # "an M suffix", "the C API"; not "I" or "A"


def _content_word(token: str) -> str | None:
    """A raw token as a lower-cased content word (possessive dropped), or None for stopwords and single
    characters other than a digit ("exit status 2") or a capital letter that names something ("M").

    A stopword written in capitals ("the ALL option", "IS NOT NULL", "IT budget") is kept: in running
    text, capitals on a function word mark a name (a keyword, a constant, an acronym), not the function
    word. A text of several words all in capitals (a man page's "SEE ALSO") is read in lower case
    (`unshouted`)."""
    word = token.lower().replace("’", "'")
    if word in STOPWORDS and not (len(token) > 1 and token.isupper()):
        return None
    if len(word) < 2 and not (word.isdigit() or token in _KEPT_LETTERS):
        return None
    return word[:-2] if word.endswith("'s") else word


def content_words(text: str) -> list[str]:
    """Words that carry meaning: lower-cased, stopwords (but a capitalised one in mixed-case text) and
    single characters (but digits and capital letters other than I and A) dropped."""
    return [c for c in map(_content_word, WORD_PATTERN.findall(unshouted(text))) if c is not None]


def unshouted(text: str) -> str:
    """A text of several words written all in capitals ("SEE ALSO", "WHAT IS THE DEFAULT?") in lower
    case: its capitals mark no name, so its function words stay function words. One word in capitals
    (a heading "``ALL``") is a name."""
    if text.isupper() and len(WORD_PATTERN.findall(text)) > 1:
        return text.lower()
    return text


_TERMS_CACHE: dict[str, tuple[str, ...]] = {}
_TERMS_CACHE_MAX = 500_000  # distinct raw tokens; cleared when full


def _token_terms(token: str) -> tuple[str, ...]:
    """The terms of one raw token: a short option or a printf-style conversion as it is; else its content
    word without apostrophes, plus its hyphen parts, stemmed."""
    if token[0] in "-%":
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
    return _tokens_terms(TERM_TOKEN.findall(unshouted(text)))


def _tokens_terms(tokens: list[str]) -> list[str]:
    """The terms of `TERM_TOKEN`'s tokens of a text, in order (see `terms`)."""
    cache = _TERMS_CACHE
    try:  # every token seen before (the usual case once a source is under way): no Python loop
        return list(chain.from_iterable(map(cache.__getitem__, tokens)))
    except KeyError:
        pass
    out: list[str] = []
    for token in tokens:
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


_PHRASE_FIRSTS = frozenset(_PHRASE_STARTS)


def _notation_kinds(text: str, tokens: list[str] | None = None) -> set[str]:
    """The comparison kinds a text states: where a phrase's first word occurs (found by `list.index`, at
    C speed, not by a Python loop over every token), its longest phrase that matches there. `tokens`:
    `words(text)` when the caller has them already."""
    kinds: set[str] = set()
    if "=" in text or "≥" in text or "≤" in text:  # every sign holds one of them
        kinds = {kind for kind, signs in _NOTATION_SIGNS.items() if any(sign in text for sign in signs)}
    if tokens is None:
        tokens = words(text)
    for first in _PHRASE_FIRSTS.intersection(tokens):
        starts = _PHRASE_STARTS[first]
        i = tokens.index(first)
        while True:
            for rest, kind in starts:
                if tuple(tokens[i + 1 : i + 1 + len(rest)]) == rest:
                    kinds.add(kind)
                    break
            try:
                i = tokens.index(first, i + 1)
            except ValueError:
                break
    return kinds


def notation_terms(text: str) -> list[str]:
    """The terms of the comparisons a text states in notation or set phrases ("GCC >= 10.1" → minimum),
    so a question in words ("the minimum GCC version") matches it."""
    return _kind_terms(_notation_kinds(text))


def _kind_terms(kinds: set[str]) -> list[str]:
    out = []
    for word in ("minimum", "maximum"):
        if word in kinds:
            found = _NOTATION_TERMS.get(word)
            if found is None:
                found = _NOTATION_TERMS[word] = stem(word)
            out.append(found)
    return out


def text_terms(text: str) -> list[str]:
    """`terms(plain_text(text)) + notation_terms(text)`, the terms of a unit's body or a piece of evidence,
    with one tokenization of the text where one serves both.

    It serves both when the text is its own plain text, not shouted, ASCII, and `TERM_TOKEN` found no short
    option, no conversion and no version in it: every token then came from `TERM_TOKEN`'s last alternative,
    which is `WORD_PATTERN`, at the same positions, so the tokens are `WORD_PATTERN`'s, and `words` is them
    lowered.
    Else the text is read a second time by `notation_terms`."""
    plain = plain_text(text)
    read = unshouted(plain)
    tokens = TERM_TOKEN.findall(read)
    out = _tokens_terms(tokens)
    if read is text and text.isascii():
        joined = " ".join(tokens)  # no token holds a space
        # a version; an option; a conversion
        if "." not in joined and not joined.startswith("-") and " -" not in joined and "%" not in joined:
            return out + _kind_terms(_notation_kinds(text, joined.lower().split(" ") if tokens else []))
    return out + notation_terms(text)
