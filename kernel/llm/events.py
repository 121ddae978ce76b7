"""What the bridge records about every LLM call a plugin makes; the engine turns these into trace nodes."""

from __future__ import annotations

from typing import Any

import msgspec

from .errors import LLM_BUDGET_EXHAUSTED

# Event statuses.
OK = "success"
CACHE_HIT = "cache-hit"
ERROR = "error"
REFUSED = "refused"  # budget exhausted: the call never reached the upstream


class LLMCallEvent(msgspec.Struct, kw_only=True, omit_defaults=True):
    requestId: str
    frameId: str = ""
    pluginId: str = ""
    callRef: str | None = None  # what the engine passed when issuing the token (its trace node id)
    role: str | None = None
    model: str = ""
    modelSource: str = ""
    status: str = OK
    cacheHit: bool = False
    promptTokens: int | None = None
    completionTokens: int | None = None
    latencyMs: float = 0.0
    attempts: int = 0  # upstream HTTP attempts (retries included); 0 for cache hits and refusals
    code: str | None = None
    message: str | None = None

    def answered(self, completion: Any) -> None:
        """The upstream answered (`completion`: a `client.Completion`)."""
        self.status, self.attempts = OK, completion.attempts
        self.promptTokens, self.completionTokens = completion.prompt_tokens, completion.completion_tokens

    def failed(self, code: str, message: str, attempts: int = 0) -> None:
        self.status = REFUSED if code == LLM_BUDGET_EXHAUSTED else ERROR
        self.code, self.message, self.attempts = code, message, attempts

    def label(self) -> str:
        model = self.model or "(default model)"
        if self.cacheHit:
            return f"LLM {model} (cache hit)"
        if self.status == OK:
            return f"LLM {model}"
        return f"LLM {model} ({self.status}: {self.code or 'error'})"

    def trace_fields(self) -> dict[str, Any]:
        """Keyword arguments for `TraceRecorder.node("llm", event.label(), parent=..., **fields)`."""
        output: dict[str, Any] = {
            "model": self.model,
            "cacheHit": self.cacheHit,
            "latencyMs": round(self.latencyMs, 3),
        }
        if self.role:
            output["role"] = self.role
        if self.promptTokens is not None:
            output["promptTokens"] = self.promptTokens
        if self.completionTokens is not None:
            output["completionTokens"] = self.completionTokens
        if self.attempts:
            output["attempts"] = self.attempts
        if self.code:
            output["code"] = self.code
        if self.message:
            output["message"] = self.message[:400]
        return {
            "frameId": self.frameId or None,
            "pluginId": self.pluginId or None,
            "status": self.status,
            "durationMs": round(self.latencyMs, 3),
            "output": output,
        }
