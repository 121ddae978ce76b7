"""sd-symbolic: Rule-based intent and knowledge extraction. Fast, deterministic, no LLM cost. Best for simple factual queries and structured input."""
