"""mdoc(7)'s inline macros read as a BSD manual page shows them: `.Fl L , Fl \\-location` is "-L, --location",
`.Xr ls 1` is "ls(1)", `.Op Fl v` is "[-v]", `.Ar` alone is "file ...", `.Ns` joins without a space. A line's
arguments are words; a word that names a callable macro starts that macro, which takes the words after it
(an enclosing macro — Op, Dq, Pq … — the rest of the line but its closing punctuation). Each word keeps its
source span (roff_text's pieces), a delimiter a macro adds shows the macro's name."""

from __future__ import annotations

from dataclasses import dataclass

from .roff_text import Text, argument_text, plain

# an enclosing macro's opening and closing delimiters
ENCLOSE = {
    **{"Op": ("[", "]"), "Bq": ("[", "]"), "Dq": ("“", "”"), "Sq": ("‘", "’"), "Ql": ("‘", "’")},
    **{"Pq": ("(", ")"), "Brq": ("{", "}"), "Aq": ("<", ">"), "Qq": ('"', '"')},
}
OPEN = {"Oo": "[", "Bo": "[", "Do": "“", "So": "‘", "Po": "(", "Bro": "{", "Ao": "<", "Qo": '"'}
CLOSE = {"Oc": "]", "Bc": "]", "Dc": "”", "Sc": "’", "Pc": ")", "Brc": "}", "Ac": ">", "Qc": '"'}
NAMES = {
    **{"Ux": "UNIX", "Bx": "BSD", "Fx": "FreeBSD", "Nx": "NetBSD", "Ox": "OpenBSD", "Dx": "DragonFly"},
    **{"Bsx": "BSD/OS", "At": "AT&T UNIX"},
}
# macros that show their words as they are
PLAIN = frozenset(
    {
        *("Ar", "Cm", "Ic", "Li", "Pa", "Ev", "Va", "Dv", "Er", "Em", "Sy", "Sx", "Tn", "No", "Ms", "Fa"),
        *("Ft", "Cd", "Ad", "An", "Lb", "Mt", "Ot", "Nm", "Fd", "St", "Ta", "Pf", "Ns", "Xr", "Fn", "Fl"),
        *("Lk", "In", "Ex", "Rv", "Nd", "Ap", "Fo", "Fc", "Eo", "Ec", "Bf", "Ef", "Sm", "Bk", "Ek"),
    }
)
CALLABLE = frozenset({*PLAIN, *ENCLOSE, *OPEN, *CLOSE, *NAMES})
CLOSING_PUNCT = frozenset({".", ",", ";", ":", "?", "!", ")", "]"})
OPENING_PUNCT = frozenset({"(", "["})


@dataclass(slots=True)
class Word:
    pieces: Text
    text: str
    glued: bool = False  # no space before it


@dataclass(slots=True)
class Mdoc:
    """What an mdoc page's inline macros need to remember: its name (.Nm without a word shows it)."""

    name: Text | None = None


Words = list[tuple[Text, str, int, int]]  # each word's text, its raw source ("\0": quoted) and its span


def words_of(source: str, args: list[tuple[int, int]], strings: dict[str, str]) -> Words:
    out: Words = []
    for a, b in args:
        pieces = argument_text(source, a, b, strings)
        quoted = a > 0 and source[a - 1] == '"'
        out.append((pieces, "\0" if quoted else source[a:b], a, b))
    return out


def render(macro: str, words: Words, at: tuple[int, int], state: Mdoc) -> list[Word]:
    """The words an mdoc macro line shows: `macro` (its span `at`) with its arguments `words`; a quoted
    word never names a macro."""
    out: list[Word] = []
    j = _call(macro, words, 0, len(words), at, state, out)
    _rest(words, j, len(words), state, out)
    return out


def _call(macro: str, words: Words, i: int, stop: int, at: tuple[int, int], st: Mdoc, out: list[Word]) -> int:
    """`macro` rendered with the words from i (not past `stop`); the index of the first word it left."""
    enclose = ENCLOSE.get(macro)
    if enclose:
        end = stop
        while end > i and words[end - 1][1] in CLOSING_PUNCT:
            end -= 1
        inner: list[Word] = []
        _rest(words, i, end, st, inner)
        out.append(Word([(enclose[0], *at)], enclose[0]))
        if inner:
            inner[0].glued = True
        out.extend(inner)
        close = words[end - 1][3] if end > i else at[1]  # shown after the last word it encloses
        out.append(Word([(enclose[1], close, close)], enclose[1], glued=True))
        return end
    j = i
    while j < stop and words[j][1] not in CALLABLE:
        j += 1
    _macro_words(macro, words[i:j], at, st, out)
    return j


def _rest(words: Words, j: int, stop: int, st: Mdoc, out: list[Word]) -> None:
    while j < stop:
        pieces, raw, a, b = words[j]
        if raw in CALLABLE:
            j = _call(raw, words, j + 1, stop, (a, b), st, out)
        else:
            out.append(Word(pieces, plain(pieces)))
            j += 1


def _macro_words(macro: str, mine: Words, at: tuple[int, int], st: Mdoc, out: list[Word]) -> None:
    a, b = at
    texts = [Word(w[0], plain(w[0])) for w in mine]
    if macro == "Fl":
        if not texts or texts[0].text in CLOSING_PUNCT:
            out.append(Word([("-", a, b)], "-"))
        for w in texts:
            if w.text in CLOSING_PUNCT or w.text in OPENING_PUNCT:
                out.append(w)
            else:
                out.append(Word([("-", a, b), *w.pieces], "-" + w.text))
        return
    if macro == "Ar" and not texts:
        out.append(Word([("file ...", a, b)], "file ..."))
        return
    if macro == "Nm":
        if texts and texts[0].text not in CLOSING_PUNCT:
            st.name = st.name or texts[0].pieces
        elif st.name:
            out.append(Word(list(st.name), plain(st.name)))
        out.extend(texts)
        return
    if macro == "Xr" and len(texts) >= 2:
        sec = texts[1]
        x, y = sec.pieces[0][1] if sec.pieces else b, sec.pieces[-1][2] if sec.pieces else b
        page: Text = [*texts[0].pieces, ("(", x, x), *sec.pieces, (")", y, y)]
        out.append(Word(page, f"{texts[0].text}({sec.text})"))
        out.extend(texts[2:])
        return
    if macro == "Fn" and texts:
        args = [w for w in texts[1:] if w.text not in CLOSING_PUNCT]
        opened = texts[0].pieces[-1][2] if texts[0].pieces else b
        pieces: Text = [*texts[0].pieces, ("(", opened, opened)]
        for k, w in enumerate(args):
            if k:
                pieces.append((", ", w.pieces[0][1], w.pieces[0][1]) if w.pieces else (", ", b, b))
            pieces.extend(w.pieces)
        end = pieces[-1][2]
        pieces.append((")", end, end))
        out.append(Word(pieces, plain(pieces)))
        out.extend(w for w in texts[1:] if w.text in CLOSING_PUNCT)
        return
    if macro in NAMES:
        out.append(Word([(NAMES[macro], a, b)], NAMES[macro]))
        out.extend(texts)
        return
    if macro == "Nd":
        out.append(Word([("—", a, b)], "—"))
    elif macro in OPEN:
        out.append(Word([(OPEN[macro], a, b)], OPEN[macro]))
        out.extend(texts)
        if texts:
            texts[0].glued = True
        return
    elif macro in CLOSE:
        out.append(Word([(CLOSE[macro], a, b)], CLOSE[macro], glued=True))
    elif macro in ("Ns", "Ap"):
        if macro == "Ap":
            out.append(Word([("'", a, b)], "'", glued=True))
        if texts:
            texts[0].glued = True
    elif macro == "Pf" and len(texts) >= 2:
        texts[1].glued = True
    elif macro == "In" and texts:
        end = texts[0].pieces[-1][2] if texts[0].pieces else b
        include: Text = [("#include <", a, b), *texts[0].pieces, (">", end, end)]
        out.append(Word(include, f"#include <{texts[0].text}>"))
        out.extend(texts[1:])
        return
    elif macro == "Lk" and len(texts) >= 2:
        out.extend(texts[1:])
        out[-1] = Word([*out[-1].pieces, (":", a, b)], out[-1].text + ":", out[-1].glued)
        out.append(texts[0])
        return
    elif macro == "Ex":
        name = plain(st.name or []) or "the"
        out.append(Word([(f"The {name} utility exits 0 on success, and >0 if an error occurs.", a, b)], ""))
        return
    elif macro == "Rv":
        name = next((w.text for w in texts if not w.text.startswith("-")), "")
        said = f"The {name}() function returns" if name else "The function returns"
        text = f"{said} the value 0 if successful; otherwise the value -1 is returned and errno is set."
        out.append(Word([(text, a, b)], text))
        return
    elif macro in ("Bf", "Ef", "Sm", "Bk", "Ek", "Fo", "Fc", "Eo", "Ec"):
        return
    out.extend(texts)


def joined(words: list[Word], at: tuple[int, int]) -> Text:
    """The words as a line shows them: a space between two, none before closing punctuation, none after an
    opening one or before a word glued to the one before (.Ns, an enclosure's inside)."""
    out: Text = []
    before = ""
    for w in words:
        if not w.pieces:
            continue
        if out and not w.glued and w.text not in CLOSING_PUNCT and before not in OPENING_PUNCT:
            out.append((" ", w.pieces[0][1], w.pieces[0][1]))
        out.extend(w.pieces)
        before = w.text
    return out if out else [("", at[0], at[0])][:0]
