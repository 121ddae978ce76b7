"""Generic English word lists for plugins, written as plain text (grammar words, common verbs; no domain terms).

`word_set("a b c")` is the frozenset of its whitespace-separated words.
"""

from __future__ import annotations

from mrpvm.protocol.analysis import IRREGULAR  # noqa: F401 - the analyser's own list (graded forms too), re-exported


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def looks_plural(word: str) -> bool:
    """A regular English plural by its ending ("readers", "options"; not "class", "status", "basis", "has").

    A heuristic for a noun already known to be a noun head: irregular plurals ("children") are missed."""
    low = word.lower()
    return len(low) > 3 and low.isalpha() and low.endswith("s") and not low.endswith(("ss", "us", "is"))


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

# "the purpose of X", "the role of X": what X does, a word the answer ("X: copies …") seldom writes
FUNCTION_NOUNS = word_set("purpose purposes function functions role roles job jobs point use uses")
# "the downside of X", "the advantage of X": an evaluation, which a text states ("safer, but slower") more
# often than it names ("the drawback is …")
EVALUATION_NOUNS = word_set(
    """advantage advantages disadvantage disadvantages downside downsides upside upsides drawback drawbacks
    benefit benefits tradeoff tradeoffs trade-off trade-offs pitfall pitfalls caveat caveats"""
)
# "the maximum time", "the minimum days": an extreme of a time noun is an amount, not a date
EXTREME_MODIFIERS = word_set("minimum maximum min max largest smallest highest lowest longest shortest")
TIME_UNITS = word_set(
    """ms millisecond milliseconds sec secs second seconds min mins minute minutes hour hours day days week
    weeks month months year years"""
)
