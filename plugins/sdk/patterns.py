"""Regular expressions compiled on first use.

A plugin module's patterns were compiled when it was imported: sd-symbolic's ~145 cost a one-turn worker
~35 ms of CPU at its start, about half of them for patterns a cold `mrpvm ask` never uses (the other acts,
block shapes and config formats); gs-symbolic's ~90 cost ~15 ms, more than half of them for patterns a
one-question solve never uses (session 18). `lazy_pattern` returns a stand-in that compiles the pattern the first
time one of its methods or attributes is used; from then on its methods are the compiled pattern's own
(bound once, no indirection per call). Use it for module-level patterns that are only called through
their methods (`.search`, `.sub`, `.pattern`, …), never handed to `re.*` functions or `isinstance` checks.
"""

from __future__ import annotations

import re
from typing import Any, cast

METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """A pattern compiled the first time it is used (see the module's doc). Its first method call binds
    the compiled pattern's methods into the instance, where later lookups find them before the class's."""

    def __init__(self, source: str, flags: int = 0):
        self._source, self._flags = source, flags
        self.compiled: re.Pattern[str] | None = None

    def _compile(self) -> re.Pattern[str]:
        compiled = self.compiled
        if compiled is None:
            compiled = self.compiled = re.compile(self._source, self._flags)
            for method in METHODS:
                self.__dict__[method] = getattr(compiled, method)
        return compiled

    def search(self, *args: Any) -> Any:
        return self._compile().search(*args)

    def match(self, *args: Any) -> Any:
        return self._compile().match(*args)

    def fullmatch(self, *args: Any) -> Any:
        return self._compile().fullmatch(*args)

    def finditer(self, *args: Any) -> Any:
        return self._compile().finditer(*args)

    def findall(self, *args: Any) -> Any:
        return self._compile().findall(*args)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        return self._compile().sub(*args, **kwargs)

    def subn(self, *args: Any, **kwargs: Any) -> Any:
        return self._compile().subn(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        return self._compile().split(*args, **kwargs)

    @property
    def pattern(self) -> str:
        return self._source

    @property
    def flags(self) -> int:
        return self._compile().flags

    @property
    def groups(self) -> int:
        return self._compile().groups

    @property
    def groupindex(self) -> Any:
        return self._compile().groupindex

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source!r}, {self._flags!r})"


def lazy_pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, done when the pattern is first used."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))


# A pro-verb phrase opening a sentence ("To do so, …", "Doing this, …", "By doing that, …") stands for the
# action the text just described: an anaphor, like a leading pronoun.
PRO_VERB = lazy_pattern(
    r"^(?:(?:to|by|in|after|before|when|without)\s+)?(?:do|doing)\s+(?:so|this|that|it)\b", re.I
)


# Adjectives of extraposition ("it is safe to …", "is it possible that …"): general English, closed enough.
_EXTRAPOSED = (
    "possible|impossible|safe|unsafe|necessary|unnecessary|ok|okay|fine|better|best|advisable|wise|easy|hard|"
    "difficult|important|useful|worth|true|likely|unlikely|allowed|permitted|required|recommended|enough|"
    "conventional|customary|common|usual|typical|normal|preferable|desirable|sufficient|convenient|reasonable|"
    "acceptable|essential|crucial|vital|mandatory|optional|legal|illegal|forbidden|prohibited|clear|unclear|"
    "obvious|good|bad|wrong|sensible|prudent|harmless"
)
# participles that extrapose a that-clause only ("it is expected that …"; "it is expected to …" refers)
_EXTRAPOSED_THAT = "expected|assumed|known|believed|said|suggested|understood|guaranteed|noted|hoped"
_DEGREE = (
    r"(?:\s+(?:not|also|often|usually|generally|always|never|still|now|therefore|thus|quite|very|more|less))?"
)
# An expletive "it" refers to nothing: "it takes … to", "it seems that", "it is / was ADJ to|that", "is it ADJ
# to|that". A sentence that opens with one is no anaphor: it needs no sentence before it.
EXPLETIVE_IT = lazy_pattern(
    r"\bit\s+(?:takes?|took)\b(?=.*\bto\b)"  # "it takes a day for a fix to ship", not "how long does it take?"
    r"|\bit\s+(?:seems?|seemed|appears?|appeared|happens?|happened)\s+that\b"
    rf"|\bit(?:\s+is|\s+was|'s|\s+would\s+be|\s+will\s+be|\s+may\s+be|\s+can\s+be){_DEGREE}\s+(?:{_EXTRAPOSED})\s+(?:to|that|for\b(?=.*\bto\b))\b"
    rf"|\bit(?:\s+is|\s+was|'s){_DEGREE}\s+(?:{_EXTRAPOSED_THAT})\s+that\b"
    rf"|\b(?:is|was)\s+it{_DEGREE}\s+(?:{_EXTRAPOSED})\s+(?:to|that|for\b(?=.*\bto\b))\b",
    re.I,
)


# A word that refers back to what the sentence before names ("This flag …", "It stores …", "They are …").
_ANAPHOR = lazy_pattern(r"^(?:it|its|they|their|them|he|his|she|her|this|these|that|those|such|both)\b", re.I)


def opens_with_anaphor(text: str) -> bool:
    """The sentence opens with a word that refers back; an expletive "it" ("It is conventional to …") refers
    to nothing."""
    return bool(_ANAPHOR.match(text)) and not EXPLETIVE_IT.match(text)


def refers_back(text: str) -> bool:
    """The sentence is about what the one before it names: an anaphor or a pro-verb ("To do so, …")."""
    return opens_with_anaphor(text) or bool(PRO_VERB.match(text))
