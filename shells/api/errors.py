"""Structured error responses: `{code, message, requestId, sessionId, timestamp, details}` with the right status.

Every failure a client can cause maps to a 4xx with a stable code; anything unexpected is logged with its
traceback on the server and answered `500 INTERNAL_ERROR` (never a bare traceback). Under `/v1/` the body
also carries OpenAI's `error` object (`message`, `type`, `code`, `param`) so OpenAI clients show the message.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import msgspec
from mrpvm.kernel.errors import KernelError, as_disk_full
from mrpvm.kernel.store_rows import now_iso
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from .schemas import ErrorBody, encode

log = logging.getLogger("mrpvm.api")

# Kernel codes whose HTTP status differs from the kernel's own mapping when they come from a request body.
STATUS_OVERRIDES = {"UNKNOWN_PLUGIN": 400}
HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "BODY_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}
_AT = re.compile(r" - at `\$\.?([^`]*)`$")
_MISSING = re.compile(r"missing required field `([^`]*)`")
_UNKNOWN = re.compile(r"unknown field `([^`]*)`")


class ApiError(Exception):
    """An error raised by the HTTP layer itself (bad body, auth, size)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.details = dict(details or {})
        self.session_id = session_id


class BodyTooLarge(ApiError):
    def __init__(self, limit: int, size: int | None = None):
        detail = {"limitBytes": limit} | ({"sizeBytes": size} if size is not None else {})
        super().__init__(
            413, "BODY_TOO_LARGE", f"the request body exceeds the limit of {limit} bytes", detail
        )


def invalid_field(field: str, message: str, status: int = 422, code: str = "INVALID_FIELD") -> ApiError:
    return ApiError(status, code, f"{field}: {message}", {"field": field})


def validation_field(message: str) -> str | None:
    """The dotted path of the field a msgspec ValidationError message names (None for the whole body)."""
    at = _AT.search(message)
    path = at.group(1).replace("[...]", "") if at else ""  # msgspec's `[...]`: some value of a mapping
    named = _MISSING.search(message) or _UNKNOWN.search(message)
    if named:
        path = f"{path}.{named.group(1)}" if path else named.group(1)
    return path or None


def from_decode_error(err: msgspec.DecodeError) -> ApiError:
    """A body that does not decode: 400 MALFORMED_JSON, or 422 VALIDATION_ERROR naming the field."""
    text = str(err)
    if isinstance(err, msgspec.ValidationError):
        field = validation_field(text)
        message = _AT.sub("", text)
        shown = f"{field}: {message}" if field else message
        return ApiError(422, "VALIDATION_ERROR", shown, {"field": field} if field else {})
    return ApiError(400, "MALFORMED_JSON", f"the request body is not valid JSON: {text}")


# --------------------------------------------------------------------------- rendering


def error_bytes(
    scope: Scope,
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    session_id: str | None = None,
) -> bytes:
    state = scope.get("state") or {}
    details = dict(details or {})
    if session_id is None:
        session_id = (
            state.get("session_id")
            or (scope.get("path_params") or {}).get("session_id")
            or details.get("session")
        )
    body = msgspec.to_builtins(
        ErrorBody(
            code=code,
            message=message,
            requestId=state.get("request_id"),
            sessionId=session_id,
            timestamp=now_iso(),
            details=details,
        )
    )
    if str(scope.get("path", "")).startswith("/v1/"):
        kind = (
            "server_error"
            if status >= 500
            else "authentication_error"
            if status == 401
            else "invalid_request_error"
        )
        body["error"] = {"message": message, "type": kind, "code": code, "param": details.get("field")}
    return encode(body)


def error_response(
    scope: Scope,
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    *,
    session_id: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    content = error_bytes(scope, status, code, message, details, session_id)
    return Response(content, status_code=status, media_type="application/json", headers=headers)


def kernel_status(err: KernelError) -> int:
    return STATUS_OVERRIDES.get(err.code, err.status)


def describe(exc: BaseException) -> tuple[int, str, str, dict[str, Any], str | None]:
    """(status, code, message, details, session id) for any exception; unexpected ones are logged."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.message, exc.details, exc.session_id
    if isinstance(exc, KernelError):
        status = kernel_status(exc)
        if status >= 500:
            log.error("kernel error %s: %s", exc.code, exc.message)
        return status, exc.code, exc.message, exc.details, None
    if isinstance(exc, msgspec.DecodeError):
        return describe(from_decode_error(exc))
    full = as_disk_full(exc)
    if full is not None:  # 507 with the remedy, wherever the write failed
        return describe(full)
    if isinstance(exc, HTTPException):
        code = HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        return exc.status_code, code, str(exc.detail), {}, None
    log.error("unexpected error while serving a request", exc_info=exc)
    return 500, "INTERNAL_ERROR", f"internal error ({type(exc).__name__}); see the daemon log", {}, None


# --------------------------------------------------------------------------- starlette handlers


async def handle(request: Request, exc: Exception) -> Response:
    status, code, message, details, session_id = describe(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status == 413:  # the rest of the body is not read: the connection closes after the answer
        headers = {"Connection": "close"}
    if isinstance(exc, HTTPException) and exc.headers:
        headers = {**(headers or {}), **exc.headers}
    return error_response(
        request.scope, status, code, message, details, session_id=session_id, headers=headers
    )


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ApiError: handle,
    KernelError: handle,
    msgspec.DecodeError: handle,
    HTTPException: handle,
    Exception: handle,  # ServerErrorMiddleware: logged, answered INTERNAL_ERROR JSON
}
