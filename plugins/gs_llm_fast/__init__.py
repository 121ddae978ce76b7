"""gs-llm-fast: Lightweight LLM synthesis from evidence. Good fluency with low latency."""
