"""planner-depth: Heavy-first fallback planner for multi-hop or recovery paths. Used when cheap planners exhaust their options."""
