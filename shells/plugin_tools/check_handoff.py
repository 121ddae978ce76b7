"""`mrpvm plugin check` for a kb-plugin whose manifest says `handoff: file` (protocol/SPEC.md §7, Units handoff).

Such a plugin is sent onSourceText as an ingest sends it: the example's text and units in a read-only
units file in its handoff folder, `payload.unitsFile` naming it, removed after the call. A units file that
does not exist must be refused like a bad request (exit 2, INVALID_HANDOFF), not indexed as nothing.
"""

from __future__ import annotations

import os

import msgspec
from mrpvm.protocol.envelope import Request, encode_request
from mrpvm.protocol.handoff import encode_handoff

from .check_judge import CheckResult, error_record, judge_valid


def with_units_file(request: Request, folder) -> tuple[Request, str]:
    """`request` (an onSourceText upsert) with its text and units moved to a fresh file in `folder`
    (kernel/supervisor/handoff.py); the caller discards the file with `folder.discard(path)`."""
    p = request.payload
    path = folder.write(encode_handoff(p.sourceId, p.sourceName, p.text, p.units))
    payload = msgspec.structs.replace(p, text="", units=[], unitsFile=path)
    return msgspec.structs.replace(request, payload=payload), path


async def check_handoff(supervisor, entry, folder, request: Request, timeout_s: float) -> list[CheckResult]:
    """The example onSourceText handed as a file (a valid answer), then one naming a missing file (exit 2)."""
    from mrpvm.kernel.supervisor import PluginCallError

    results = []
    handed, path = with_units_file(request, folder)
    name = "onSourceText: example request, units in a handoff file (handoff: file)"
    try:
        reply = await supervisor.call_raw(
            entry.id, encode_request(handed), timeout_s=timeout_s, one_shot=True
        )
        passed, detail = judge_valid(reply, "onSourceText", entry.id)
    except PluginCallError as err:
        passed, detail = False, f"kernel error {err.error.code}: {err.error.message}"
    finally:
        folder.discard(path)
    results.append(CheckResult(name=name, passed=passed, detail=detail))
    missing = msgspec.structs.replace(
        handed, payload=msgspec.structs.replace(handed.payload, unitsFile=os.path.join(folder.path, "absent"))
    )
    name = "onSourceText: a units file that does not exist is refused (exit 2, INVALID_HANDOFF)"
    try:
        reply = await supervisor.call_raw(
            entry.id, encode_request(missing), timeout_s=timeout_s, one_shot=True
        )
    except PluginCallError as err:
        results.append(CheckResult(name=name, passed=False, detail=f"kernel error {err.error.code}"))
        return results
    record, _ = error_record(reply.stderr)
    code = record.get("code") if record else None
    if reply.exitCode == 2 and code:
        results.append(CheckResult(name=name, passed=True, detail=f"exit 2, code {code}"))
    else:
        results.append(
            CheckResult(
                name=name,
                passed=False,
                detail=f"exit {reply.exitCode}, code {code} — fix: when payload.unitsFile cannot be read, "
                'exit 2 with the error line {"code":"INVALID_HANDOFF","message":…} (nothing is indexed)',
            )
        )
    return results
