"""A one-shot plugin run's outcome, and what its exit means (protocol/SPEC.md §2, DS016)."""

from __future__ import annotations

from typing import Any

from mrpvm.protocol.errors import parse_error_line
from mrpvm.protocol.vocab import EXIT_INVALID_INPUT, EXIT_PROCESSING_ERROR, EXIT_TIMEOUT

from .errors import (
    CRASHED,
    OUTPUT_TOO_LARGE,
    PLUGIN_ERROR,
    PLUGIN_INVALID_INPUT,
    SANDBOX_LIMIT,
    TIMEOUT,
    ProcessFailure,
    describe_exit,
)


class OneShotOutcome:
    """What a one-shot process left: stdout (capped), the stderr tail, its exit and why it ended."""

    __slots__ = ("stdout", "stderr", "code", "timed_out", "over_cap", "limit")

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = b""
        self.code: int | None = None
        self.timed_out = False
        self.over_cap = False
        self.limit: str | None = None  # a whole-sandbox limit ended the process (why)


def one_shot_result(out: OneShotOutcome) -> bytes:
    """The stdout of a successful run, or the ProcessFailure its exit code means (DS016)."""
    code = out.code
    if out.limit:
        raise ProcessFailure(SANDBOX_LIMIT, out.limit, stderr=out.stderr, exit_code=code)
    if out.over_cap:
        raise ProcessFailure(
            OUTPUT_TOO_LARGE,
            "output exceeds the output cap; process killed",
            stderr=out.stderr,
            exit_code=code,
        )
    if out.timed_out:
        raise ProcessFailure(TIMEOUT, "deadline passed; process killed", stderr=out.stderr, exit_code=code)
    if code == 0:
        return bytes(out.stdout)
    info = parse_error_line(out.stderr) if code in (1, 2, 3) else None
    details: dict[str, Any] = {}
    if info is not None:
        details = {"pluginCode": info.code, "pluginMessage": info.message, "pluginDetails": info.details}
    if code == EXIT_PROCESSING_ERROR:
        kind, what = PLUGIN_ERROR, "processing error"
    elif code == EXIT_INVALID_INPUT:
        kind, what = PLUGIN_INVALID_INPUT, "invalid input"
    elif code == EXIT_TIMEOUT:
        kind, what = TIMEOUT, "the plugin's own deadline passed"
        details["reportedByPlugin"] = True
    else:
        raise ProcessFailure(CRASHED, f"plugin {describe_exit(code)}", stderr=out.stderr, exit_code=code)
    if info is not None:
        message = f"{what}: {info.code}: {info.message}"
    else:
        last = out.stderr.strip().splitlines()[-1:] or [b""]
        message = f"{what} (exit {code}) without an error line on stderr" + (
            f"; last stderr line: {last[0][:200].decode('utf-8', 'replace')}" if last[0] else ""
        )
    # A plugin-reported timeout is an honest answer, not a kernel kill: it does not feed the breaker.
    raise ProcessFailure(kind, message, stderr=out.stderr, exit_code=code, details=details, crash=False)
