"""planner-default: Adaptive cheap-first planner with EWMA learning. Inspects task signals (depth, speed, symbolic cues) to adjust ordering."""
