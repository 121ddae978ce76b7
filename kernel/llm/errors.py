"""Structured errors of the LLM bridge: a stable code, an HTTP status for the loopback endpoint, details."""

from __future__ import annotations

from typing import Any

from ..errors import KernelError

# Codes (upper snake case, as every kernel error). The loopback endpoint lower-cases them in its
# OpenAI-style error bodies.
LLM_UNAVAILABLE = "LLM_UNAVAILABLE"  # no upstream configured
LLM_TIMEOUT = "LLM_TIMEOUT"  # every attempt timed out (or the call's deadline left no time)
LLM_CONNECTION_ERROR = "LLM_CONNECTION_ERROR"  # upstream unreachable / connection dropped
LLM_RATE_LIMITED = "LLM_RATE_LIMITED"  # upstream answered 429 on every attempt
LLM_UPSTREAM_ERROR = "LLM_UPSTREAM_ERROR"  # upstream answered 5xx on every attempt
LLM_UPSTREAM_REJECTED = "LLM_UPSTREAM_REJECTED"  # upstream answered 4xx (bad model, bad request, auth)
LLM_BAD_RESPONSE = "LLM_BAD_RESPONSE"  # not JSON, or JSON without choices/content
LLM_BUDGET_EXHAUSTED = "LLM_BUDGET_EXHAUSTED"  # the request (or this plugin call) has no LLM calls left
LLM_TOKEN_INVALID = "LLM_TOKEN_INVALID"  # unknown, revoked or expired per-call token
LLM_BAD_REQUEST = "LLM_BAD_REQUEST"  # the plugin sent a malformed chat request

_STATUS = {
    LLM_UNAVAILABLE: 503,
    LLM_TIMEOUT: 504,
    LLM_CONNECTION_ERROR: 502,
    LLM_RATE_LIMITED: 502,
    LLM_UPSTREAM_ERROR: 502,
    LLM_UPSTREAM_REJECTED: 502,
    LLM_BAD_RESPONSE: 502,
    LLM_BUDGET_EXHAUSTED: 429,
    LLM_TOKEN_INVALID: 401,
    LLM_BAD_REQUEST: 400,
}


class LLMError(KernelError):
    """A bridge failure. `status` is what the loopback endpoint answers with."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(code, message, details)
        self.http_status = _STATUS.get(code, 502)

    @property
    def status(self) -> int:  # type: ignore[override]
        return self.http_status

    def openai_body(self) -> dict[str, Any]:
        """The OpenAI-style error body: {"error": {"message", "type", "code", "details"}}."""
        kind = {
            429: "insufficient_quota",
            400: "invalid_request_error",
            401: "invalid_request_error",
            503: "service_unavailable",
            504: "timeout",
        }.get(self.http_status, "upstream_error")
        return {
            "error": {
                "message": self.message,
                "type": kind,
                "code": self.code.lower(),
                "details": self.details,
            }
        }
