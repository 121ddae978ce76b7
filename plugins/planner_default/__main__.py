"""planner-default: adaptive cheap-first planner with EWMA learning (see plugins/planner_common)."""

from mrpvm.plugins.planner_common import Strategy, Weights, make_planner

STRATEGY = Strategy(name="planner-default", weights=Weights(heavy_first=False))

plugin = make_planner("planner-default", STRATEGY)

if __name__ == "__main__":
    plugin.main()
