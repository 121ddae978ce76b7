"""planner-depth: heavy-first fallback planner for multi-hop and recovery paths (see plugins/planner_common).

Expensive and deep plugins come first; declared acts and cues weigh less than in planner-default, so a
recovery pass tries the plugins the cheap path did not lead with.
"""

from mrpvm.plugins.planner_common import Strategy, Weights, make_planner

STRATEGY = Strategy(
    name="planner-depth",
    weights=Weights(heavy_first=True, cost=1.5, acts=0.3, relevance=0.3, cue=0.5, utility=2.0),
    decompose_after_failure=True,
)

plugin = make_planner("planner-depth", STRATEGY)

if __name__ == "__main__":
    plugin.main()
