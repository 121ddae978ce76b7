"""gs-symbolic: Deterministic answer assembly from retrieved evidence. No LLM cost. Produces structured bullet-point answers."""
