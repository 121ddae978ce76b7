"""Kernel errors: one base with a stable code, a message, structured details and an HTTP-ish status.

The CLI prints `code: message` on one line and exits non-zero; the daemon answers with `status` and
`{"code","message","details"}`. Each subclass fixes its code and status with class keywords
(`class KbNotFound(NotFound, code="KB_NOT_FOUND")`), so callers can `except KbNotFound` and clients can
switch on `code`; a subclass without `status=` keeps its parent's.
"""

from __future__ import annotations

from typing import Any, ClassVar


class KernelError(Exception):
    """Base kernel error: `code` (stable, upper snake case), `message`, `details`, `status`."""

    default_code: ClassVar[str] = "KERNEL_ERROR"
    status: ClassVar[int] = 500

    def __init_subclass__(cls, *, code: str | None = None, status: int | None = None, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.default_code = code
        if status is not None:
            cls.status = status

    def __init__(self, code: str | None = None, message: str = "", details: dict[str, Any] | None = None):
        self.code = code or self.default_code
        self.message = message or self.code
        self.details: dict[str, Any] = dict(details or {})
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}

    def __str__(self) -> str:
        return self.message


class _Fixed(KernelError):
    """A subclass with a fixed code. Both `KbNotFound("no KB 'x'")` and the base-style
    `KbNotFound("KB_NOT_FOUND", "no KB 'x'", {...})` work."""

    def __init__(self, *args: Any, details: dict[str, Any] | None = None, code: str | None = None):
        if len(args) >= 2 and isinstance(args[1], str):  # (code, message[, details])
            code = code or args[0]
            message = args[1]
            details = details or (args[2] if len(args) > 2 else None)
        else:  # (message[, details])
            message = args[0] if args else ""
            details = details or (args[1] if len(args) > 1 else None)
        super().__init__(code or self.default_code, message, details)


# 404: a named thing does not exist
class NotFound(_Fixed, code="NOT_FOUND", status=404): ...


class SessionNotFound(NotFound, code="SESSION_NOT_FOUND"): ...


class KbNotFound(NotFound, code="KB_NOT_FOUND"): ...


class TurnNotFound(NotFound, code="TURN_NOT_FOUND"): ...


class SourceNotFound(NotFound, code="SOURCE_NOT_FOUND"): ...


class UnknownPluginError(NotFound, code="UNKNOWN_PLUGIN"): ...


# 400 / 409 / 422: bad input
class BadInput(_Fixed, code="BAD_INPUT", status=400): ...


class ConfigError(BadInput, code="CONFIG_INVALID"):
    """Invalid configuration (the loader's own error is re-raised as this for the CLI/daemon)."""


class ArchiveError(BadInput, code="BAD_ARCHIVE"):
    """A KB archive that cannot be imported (not a zip, wrong format or version, inconsistent content)."""


class KbExists(_Fixed, code="KB_EXISTS", status=409): ...


class ValidationFailed(_Fixed, code="VALIDATION_FAILED", status=422):
    """Well-formed input that breaks a rule (bad CNL from a plugin, an invalid KU tree...)."""


class IngestError(_Fixed, code="INGEST_FAILED", status=422): ...


# 429 / 504: budgets
class BudgetExhausted(_Fixed, code="BUDGET_EXHAUSTED", status=429): ...


class DeadlineExceeded(_Fixed, code="DEADLINE_EXCEEDED", status=504): ...


# 500: storage
class StoreError(_Fixed, code="STORE_ERROR", status=500):
    """The database cannot be opened or is newer than this kernel understands."""


# 507: the disk holding the kernel home is full
SQLITE_FULL = 13
DISK_FULL_REMEDY = "free space, e.g. `mrpvm kb rm NAME` (it removes the KB's indexes first), then retry"


class DiskFull(_Fixed, code="DISK_FULL", status=507):
    """The database or a file of the kernel home could not be written: no space left."""


def as_disk_full(err: BaseException, where: str = "") -> DiskFull | None:
    """The DiskFull that `err` means (SQLite's SQLITE_FULL, or ENOSPC / EDQUOT from a file), else None."""
    import errno

    if isinstance(err, DiskFull):
        return err
    full = getattr(err, "sqlite_errorcode", None) == SQLITE_FULL or "database or disk is full" in str(err)
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        full, where = True, where or (err.filename or "")
    if not full:
        return None
    place = f" ({where})" if where else ""
    return DiskFull(f"disk full: could not write{place}: {DISK_FULL_REMEDY}", {"where": where})


__all__ = [
    "ArchiveError",
    "DiskFull",
    "BadInput",
    "BudgetExhausted",
    "ConfigError",
    "DeadlineExceeded",
    "IngestError",
    "KbExists",
    "KbNotFound",
    "KernelError",
    "NotFound",
    "SessionNotFound",
    "SourceNotFound",
    "StoreError",
    "TurnNotFound",
    "UnknownPluginError",
    "ValidationFailed",
]
