"""A planner reads a descriptor's facts (cost, declared traits, terms) once per descriptor object of a request
and once per distinct descriptor across requests (planner_common/ranking.py, issue 22)."""

from __future__ import annotations

from mrpvm.plugins.planner_common import ranking
from mrpvm.protocol.envelope import Descriptor


def descriptor(cost: str, text: str) -> Descriptor:
    return Descriptor(id="kb-x", type="kb-plugin", costClass=cost, description=text)


def test_facts_follow_the_descriptor_not_its_id(monkeypatch):
    encoded = []
    real = ranking._facts_key

    class Counting:
        def encode(self, d):
            encoded.append(d.id)
            return real.encode(d)

    monkeypatch.setattr(ranking, "_facts_key", Counting())
    cheap = descriptor("cheap", "Keyword lookup.")
    first = ranking._facts(cheap)
    assert ranking._facts(cheap) is first and ranking._facts(cheap) is first
    assert len(encoded) == 1  # the same object asked again: no new key built
    same_fields = descriptor("cheap", "Keyword lookup.")
    assert ranking._facts(same_fields) is first  # another request's equal descriptor: the same facts
    dear = descriptor("expensive", "Graph walk for multi-hop questions.")
    assert ranking.cost_of(dear) > ranking.cost_of(cheap)
    assert ranking._facts(dear).terms != first.terms
