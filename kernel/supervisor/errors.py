"""What a plugin call returns: a parsed result, a raw reply, or a structured error record."""

from __future__ import annotations

from typing import Any

import msgspec
from mrpvm.protocol.cnl_compact import ShippedAnalysis
from mrpvm.protocol.document import CnlDocument

# Error codes (CallError.code).
UNKNOWN_PLUGIN = "UNKNOWN_PLUGIN"
INPUT_TOO_LARGE = "INPUT_TOO_LARGE"
OUTPUT_TOO_LARGE = "OUTPUT_TOO_LARGE"
TIMEOUT = "TIMEOUT"
CRASHED = "CRASHED"
PLUGIN_ERROR = "PLUGIN_ERROR"  # one-shot exit 1
PLUGIN_INVALID_INPUT = "PLUGIN_INVALID_INPUT"  # one-shot exit 2
INVALID_CNL = "INVALID_CNL"
PROTOCOL_ERROR = "PROTOCOL_ERROR"  # garbage, broken framing, wrong `Request:` id, unsolicited output
SPAWN_FAILED = "SPAWN_FAILED"
PLUGIN_UNAVAILABLE = "PLUGIN_UNAVAILABLE"  # crash-loop backoff
SHUTDOWN = "SHUTDOWN"
# A plugin and its children reached a whole-sandbox limit (processes or memory, cgroups.py): all killed.
SANDBOX_LIMIT = "SANDBOX_LIMIT"
# The kernel failed while handling the call (an unexpected exception: a bug, or a resource the kernel ran
# out of). The call counts as a failure of this plugin, so the stage moves to its next candidate.
INTERNAL_ERROR = "INTERNAL_ERROR"

# Failures that cost a process: they count towards the crash-loop threshold.
PROCESS_FAILURES = frozenset(
    {CRASHED, SPAWN_FAILED, TIMEOUT, PROTOCOL_ERROR, OUTPUT_TOO_LARGE, SANDBOX_LIMIT}
)


class CallError(msgspec.Struct, kw_only=True):
    """A structured error record: what failed, where, and the plugin's last words on stderr."""

    code: str
    message: str
    plugin: str
    op: str
    stderrTail: str = ""
    exitCode: int | None = None
    details: dict[str, Any] = {}


class PluginCallError(Exception):
    """Raised by `Supervisor.call` / `call_raw`; `.error` holds the record."""

    def __init__(self, error: CallError):
        self.error = error
        super().__init__(f"{error.plugin} {error.op}: {error.code}: {error.message}")

    @property
    def code(self) -> str:
        return self.error.code


class CallResult(msgspec.Struct, kw_only=True):
    """A parsed, validated plugin output (any Status: the engine decides what an error status means)."""

    pluginId: str
    op: str
    document: CnlDocument
    durationMs: float
    mode: str  # "worker" | "one-shot" | "memo" (a pure plugin's kept reply, reply_memo.py)
    stderrTail: str = ""  # what the plugin wrote to stderr during the call, kept for a Status: error result
    cnl: str = ""  # the CNL text as the plugin wrote it (the trace keeps its head); "" for a compact reply
    shipped: ShippedAnalysis | None = None  # the analysis a compact reply carried (protocol/cnl_compact.py)


class RawReply(msgspec.Struct, kw_only=True):
    """What a plugin process wrote, unparsed (for `mrpvm plugin run/check`)."""

    stdout: bytes
    stderr: bytes
    exitCode: int | None
    durationMs: float
    mode: str
    timedOut: bool = False


class ProcessFailure(Exception):
    """Internal: a process-level failure before it is stamped with plugin and op."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        exit_code: int | None = None,
        stderr: bytes = b"",
        details: dict[str, Any] | None = None,
        crash: bool | None = None,
    ):
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code
        self.stderr, self.details = stderr, details or {}
        # Does it count towards the crash-loop threshold? By default: failures that cost a process.
        self.crash = code in PROCESS_FAILURES if crash is None else crash

    def to_error(self, plugin: str, op: str) -> CallError:
        return CallError(
            code=self.code,
            message=self.message,
            plugin=plugin,
            op=op,
            stderrTail=self.stderr.decode("utf-8", "replace"),
            exitCode=self.exit_code,
            details=self.details,
        )


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"
