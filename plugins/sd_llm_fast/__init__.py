"""sd-llm-fast: Lightweight LLM-backed normalization. Good balance of quality and speed for most conversational input."""
