"""sd-llm-deep: Thorough LLM normalization with richer intent decomposition. Best for ambiguous, multi-part, or complex requests."""
