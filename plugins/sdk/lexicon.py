"""Generic English word lists for plugins, written as plain text (grammar words, common verbs; no domain terms).

`word_set("a b c")` is the frozenset of its whitespace-separated words.
"""

from __future__ import annotations

from mrpvm.protocol.analysis import IRREGULAR  # noqa: F401 - the analyser's own list, re-exported


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Verbs that open an instruction ("Check the filter.", "Run the tests."): procedural sentences.
IMPERATIVE_VERBS = word_set(
    """add adjust align allocate apply arrange assign attach authenticate avoid back bake beat blend boil
    book build buy calculate call cancel change charge check choose chop clean clear click clone close
    collect combine commit compile complete compute configure confirm connect consider contact copy
    cover create cut declare define delete deploy describe detach determine disable disconnect download
    drag drain draw drill drop edit empty enable enter ensure erase estimate execute export extract
    fetch fill find finish fit fix flip fold follow format generate get give go grab grant heat hold
    identify import include increase initialize insert install invoke keep label launch leave lift list
    load locate lock log login lower make mark measure merge mix modify monitor mount move navigate note
    notify obtain open order pack paste pay perform pick pin place plug pour prepare preheat press print
    proceed provide pull push put read reboot record reduce refresh register reinstall release reload
    remove rename repeat replace reset resize restart restore retry return review rinse rotate run save
    scan schedule scroll search select send serve set share shut sign simmer slice sort specify spread
    start stir stop store submit swap switch tap test tighten toggle transfer turn type unlock unmount
    unplug unzip update upgrade upload use validate verify visit wait wash watch whisk wipe write"""
)


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
