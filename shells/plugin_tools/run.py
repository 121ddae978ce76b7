"""`mrpvm plugin run`: one request to one plugin, exactly as the kernel sends it, through the Supervisor.

The request is validated on the kernel side first (invalid JSON or schema → exit 2, the plugin never
starts). The outcome mirrors the plugin: its CNL on stdout, and an exit code that follows the
protocol's (0 ok, 1 processing error, 2 invalid input, 3 timeout), whether the answer came from a
one-shot process's exit code or from a worker's error result.
"""

from __future__ import annotations

import os
from typing import cast

import msgspec
from mrpvm.kernel.config import LimitsConfig
from mrpvm.kernel.registry import PluginEntry, Registry
from mrpvm.protocol.cnl import CnlError, parse_document, render_document
from mrpvm.protocol.envelope import Paths, Request, RequestError, decode_request, encode_request
from mrpvm.protocol.vocab import (
    EXIT_INVALID_INPUT,
    EXIT_OK,
    EXIT_PROCESSING_ERROR,
    EXIT_TIMEOUT,
    MAIN_OP,
    OPS,
    Op,
)

# Error codes that mean "the input was refused" (exit 2) and "out of time" (exit 3).
INVALID_INPUT_CODES = frozenset(
    {
        "INPUT_TOO_LARGE",
        "INVALID_JSON",
        "SCHEMA_VIOLATION",
        "PLUGIN_INVALID_INPUT",
        "INVALID_INPUT",
        "BAD_INPUT",
    }
)
TIMEOUT_CODES = frozenset({"TIMEOUT", "DEADLINE_EXCEEDED"})


class RunOutcome(msgspec.Struct, kw_only=True):
    """What the shell prints and returns: stdout text, stderr text (one JSON line or the plugin's own), exit code."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = EXIT_OK
    mode: str = ""
    durationMs: float = 0.0


class PreparedRequest(msgspec.Struct, kw_only=True):
    op: str
    request: Request
    body: bytes


def exit_code_for(code: str | None, exit_code: int | None = None) -> int:
    """The protocol exit code an error code (or a one-shot exit code) stands for."""
    if exit_code in (EXIT_INVALID_INPUT, EXIT_TIMEOUT):
        return exit_code
    if code in INVALID_INPUT_CODES:
        return EXIT_INVALID_INPUT
    if code in TIMEOUT_CODES:
        return EXIT_TIMEOUT
    return EXIT_PROCESSING_ERROR


def _error_line(code: str, message: str, **details: object) -> str:
    record: dict[str, object] = {"code": code, "message": message}
    if details:
        record["details"] = details
    return msgspec.json.encode(record).decode() + "\n"


def prepare_request(entry: PluginEntry, data: bytes, op: str | None) -> PreparedRequest:
    """Validate a request as the kernel would and fix its op; raises RequestError (exit 2)."""
    if op is not None and op not in OPS:
        raise RequestError("SCHEMA_VIOLATION", f"unknown op '{op}' (one of {', '.join(OPS)})")
    try:
        request = msgspec.json.decode(data, type=Request)
    except msgspec.ValidationError as err:
        raise RequestError("SCHEMA_VIOLATION", f"request: {err}") from None
    except msgspec.DecodeError as err:
        raise RequestError("INVALID_JSON", f"request is not valid JSON: {err}") from None
    request.op = cast(Op, op or request.op or MAIN_OP[entry.type])  # `op` was checked against OPS above
    artifacts = request.paths.artifacts
    if artifacts and not os.path.isabs(artifacts):  # the plugin runs in its own folder: anchor it here
        request.paths = Paths(artifacts=os.path.abspath(artifacts))
    if request.op not in entry.manifest.ops:
        declared = ", ".join(entry.manifest.ops)
        raise RequestError(
            "SCHEMA_VIOLATION", f"{entry.id} does not declare op {request.op} (its ops: {declared})"
        )
    body = encode_request(request)
    decode_request(body, entry.type)  # the payload must fit the op's payload type
    return PreparedRequest(op=request.op, request=request, body=body)


async def run_plugin(
    registry: Registry,
    plugin_id: str,
    data: bytes,
    *,
    op: str | None = None,
    one_shot: bool = False,
    timeout_s: float | None = None,
    limits: LimitsConfig | None = None,
) -> RunOutcome:
    """Send one request; worker plugins go through their pool unless `one_shot`."""
    from mrpvm.kernel.supervisor import PluginCallError, Supervisor

    entry = registry.get(plugin_id)
    try:
        prepared = prepare_request(entry, data, op)
    except RequestError as err:
        return RunOutcome(stderr=_error_line(err.code, str(err)), exit_code=EXIT_INVALID_INPUT)
    async with Supervisor(registry, limits=limits) as supervisor:
        try:
            if one_shot:
                reply = await supervisor.call_raw(
                    plugin_id, prepared.body, timeout_s=timeout_s, one_shot=True
                )
                return _from_raw(entry, prepared.op, reply)
            result = await supervisor.call(plugin_id, prepared.request, timeout_s=timeout_s)
        except PluginCallError as err:
            record = msgspec.json.encode(err.error).decode() + "\n"
            return RunOutcome(stderr=record, exit_code=exit_code_for(err.error.code, err.error.exitCode))
    doc = result.document
    code = EXIT_OK if doc.result.status != "error" else exit_code_for(doc.result.code)
    return RunOutcome(
        stdout=render_document(doc), exit_code=code, mode=result.mode, durationMs=result.durationMs
    )


def _from_raw(entry: PluginEntry, op: str, reply) -> RunOutcome:
    """A one-shot reply passed through as the plugin wrote it; the exit code is the plugin's."""
    stdout = reply.stdout.decode("utf-8", "replace")
    stderr = reply.stderr.decode("utf-8", "replace")
    base = {"mode": reply.mode, "durationMs": reply.durationMs}
    if reply.timedOut:
        line = _error_line(
            "TIMEOUT", f"{entry.id} did not answer {op} in time and was killed", plugin=entry.id
        )
        return RunOutcome(stdout=stdout, stderr=stderr + line, exit_code=EXIT_TIMEOUT, **base)
    if reply.exitCode != EXIT_OK:
        code = (
            reply.exitCode
            if reply.exitCode is not None and 0 < reply.exitCode < 256
            else EXIT_PROCESSING_ERROR
        )
        if not stderr.strip():
            stderr = _error_line(
                "PLUGIN_ERROR", f"{entry.id} exited with code {reply.exitCode} and said nothing"
            )
        return RunOutcome(stdout=stdout, stderr=stderr, exit_code=code, **base)
    try:
        parse_document(stdout, op)
    except CnlError as err:
        line = _error_line(
            "INVALID_CNL", f"{entry.id} answered {op} with invalid CNL: {err}", plugin=entry.id
        )
        return RunOutcome(stdout=stdout, stderr=stderr + line, exit_code=EXIT_PROCESSING_ERROR, **base)
    return RunOutcome(stdout=stdout, stderr=stderr, exit_code=EXIT_OK, **base)
