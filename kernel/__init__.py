"""The MRP-VM kernel: frames, budgets, the LLM bridge, plugin supervision and the loop (docs/ARCHITECTURE.md)."""
