"""kb_common's per-profile shortcuts give the very scores of the per-candidate arithmetic they replace.

`goal_boost(..., tags)` reuses the role/acts field score of a (origin, role, acts) already scored for the
profile, and `annotate` multiplies a query term's weight by its idf once per call: both must leave every
candidate's `score` and `match` bit for bit as before (a retrieve's ranking and its reply unchanged).
"""

from __future__ import annotations

import copy

import pytest
from kb_corpus import BAKING, NETWORK, intent, tree
from mrpvm.plugins.kb_common import Candidate, KBStore, MemoryIndex, SelectionConfig, Views, build_profile
from mrpvm.plugins.kb_common.scoring import tag_score
from mrpvm.plugins.kb_common.selection import TagScores, annotate, goal_boost

UNITS = tree(
    "network", NETWORK, "Home network guide: router setup, mesh networks and wireless bands."
) + tree("baking", BAKING, "Sourdough baking guide: reviving and feeding a starter, steam, crust and crumb.")
QUESTIONS = [
    ("implement", "How do I reset the router to its default password?"),
    ("explain", "Why does steam keep the crust of the bread soft?"),
    ("define", "What is a sourdough starter and how is it fed?"),
    ("evaluate", "Can the guest network reach the printers on the mesh?"),
]


@pytest.fixture(params=["inline", "kb", "both"])
def views(request, tmp_path):
    store = None
    if request.param != "inline":
        store = KBStore(tmp_path / "kb")
        store.upsert("network", "network.md", [u for u in UNITS if u.sourceId == "network"])
        store.upsert("baking", "baking.md", [u for u in UNITS if u.sourceId == "baking"])
    inline = {"inline": MemoryIndex(UNITS), "both": MemoryIndex(UNITS[:6]), "kb": None}[request.param]
    yield Views(inline, store)
    if store is not None:
        store.close()


def _pool(views: Views, weights: dict[str, float]) -> list[Candidate]:
    return [Candidate(entry, score) for entry, score in views.search(weights, 20)]


@pytest.mark.parametrize(("act", "question"), QUESTIONS)
def test_goal_boost_with_kept_tag_scores_equals_the_plain_one(views, act, question):
    profile = build_profile(intent(1, act, question))
    config = SelectionConfig()
    plain = _pool(views, profile.weights)
    assert plain, "the invented corpus must give candidates"
    kept = [copy.copy(c) for c in plain]
    for c in plain:
        goal_boost(c, profile, views, config)
    tags: TagScores = {}
    for c in kept:
        goal_boost(c, profile, views, config, tags)
    assert [c.score for c in kept] == [c.score for c in plain]
    # the kept scores are those of each role/acts set, and the units share a few of them
    for (origin, role, acts), score in tags.items():
        unit = next(
            c.unit for c in kept if (c.origin, c.unit.role, tuple(c.unit.acts)) == (origin, role, acts)
        )
        assert score == tag_score(unit, profile.weights, lambda f, t, o=origin: views.tag_idf(o, f, t))
    assert len(tags) <= len(kept)


@pytest.mark.parametrize(("act", "question"), QUESTIONS)
def test_annotate_match_is_the_idf_weighted_sum(views, act, question):
    profile = build_profile(intent(1, act, question))
    pool = _pool(views, profile.weights)
    annotate(pool, profile, views)
    for c in pool:
        common = c.terms.intersection(profile.weights)
        assert c.match == sum(profile.weights[t] * views.idf(t) for t in common)
