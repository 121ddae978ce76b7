"""An option named by the noun that says it is one: "the SQLITE_FOO compile-time option", "the `wrap`
setting", "option `-j`".

A question typed `option` ("Which compile-time option enables X?", "Which setting turns off Y?") is answered by
the sentence that names one. A command-line option is recognised by its shape (`-x`, `--long`); a build
macro, a configuration key or a program's setting has no shape of its own, but the sentence that names it says
what it is with the kind noun beside it (an appositive): "the <name> [<modifier>] option", "the option <name>".
The name must be written as an identifier — a code span, a constant in capitals with an underscore or digit
(`SQLITE_SOUNDEX`, `O_DIRECT`), or a word with an inner capital (`ServerAliveInterval`, `maxRetries`) — so
"the HTTP option" or "the default option" name nothing, and it must not be only the question's own words
(the option the question asks about, quoted back, is no answer to "which option …"). Such a sentence answers
only for what the question names: an identifier the question writes ("zfold()", `zfold`, QZ_FOLD) must be
written in the sentence's unit or the headings over it, or the option named is another entry's (the option of
the function documented beside the asked one).
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

# the nouns that say a name is an option's (answer_types' "option" head nouns, and the settings' own words)
_KIND = r"(?:option|options|flag|flags|switch|switches|setting|settings|parameter|parameters)"
# an identifier: a code span, a constant (capitals joined by "_" or with digits), a word with an inner capital
_NAME = (
    r"(?:`[^`\n]{1,60}`"
    r"|(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)"
    r"|(?-i:\b[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*\b))"
)
# "the X option", "the X compile-time option", "a `y` setting" / "the option X", "the setting `y`"
_NAMED = lazy_pattern(
    rf"\b(?:the|a|an)\s+(?P<before>{_NAME})\s+(?:[\w-]+\s+)?{_KIND}\b"
    rf"|\b(?:the\s+)?{_KIND}\s+(?P<after>{_NAME})",
    re.I,
)


# an identifier a question writes: a function written with its call's parentheses, a code span, a constant
_ASKED_NAME = lazy_pattern(r"\b([A-Za-z_][\w.]*)\(\)|`([^`\n]{1,60})`|(?-i:\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b)")


def named_options(text: str) -> list[str]:
    """The identifiers `text` names as options by the kind noun beside them, in order."""
    return [m.group("before") or m.group("after") for m in _NAMED.finditer(text)]


def names_option(text: str, asked: set[str], question: str = "", around: str = "") -> bool:
    """`text` names an option the question (its terms `asked`) does not write itself, and `around` (the
    sentence's unit and headings) writes every identifier `question` names."""
    if not any(set(terms(name.strip("`"))) - asked for name in named_options(text)):
        return False
    names = [next(g for g in m.groups() if g) for m in _ASKED_NAME.finditer(question)]
    written = set(terms(around))
    return all(set(terms(name)) <= written for name in names)
