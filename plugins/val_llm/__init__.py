"""val-llm: LLM-backed response validator. Checks that the answer is grounded in evidence and addresses the question. Rejection triggers replanning."""
