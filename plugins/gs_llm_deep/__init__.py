"""gs-llm-deep: Thorough LLM synthesis with richer reasoning. Best for complex or nuanced answers."""
