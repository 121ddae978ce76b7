"""A condition the question sets after what it asks ("… when neither X nor Y is specified") is matched by a
stated one about the same thing, weighed by how rare the shared words are in the evidence, not by one that
shares only its generic words ("no", "specified"): golden test on sentences written here (issue 20)."""

from __future__ import annotations

from mrpvm.plugins.gs_symbolic.directives import condition_of, stands_to, trailing_condition


def test_a_trailing_condition_is_not_matched_by_its_generic_words_alone():
    asked = trailing_condition("Which option is the default when neither STACK nor NO STACK is specified?")
    stated = condition_of("If the colour is left out or NO MARGIN is specified, every page stays white.")
    same = condition_of("If neither `STACK` nor `NO STACK` is specified, `NO STACK` is the default.")
    assert asked is not None and stated is not None and same is not None
    # the evidence's rarity of each word: "stack" is rare, "no" and "specified" are everywhere
    rarity = {"stack": 3.0, "neither": 2.0, "specifi": 0.6, "no": 0.3}

    def weight(t: str) -> float:
        return rarity.get(t, 1.0)

    agrees, opposes, _ = stands_to([stated], asked, True, weight)
    assert not agrees and not opposes  # shares only "no" and "specified": about a colour and a margin
    assert stands_to([same], asked, True, weight)[0]  # the condition about STACK agrees
