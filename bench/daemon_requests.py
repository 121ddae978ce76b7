"""`mrpvm serve` that records every plugin call's request and reply sizes, and keeps sample request bodies.

    PERF_REQUESTS=DIR CHECKOUT/.venv/bin/python daemon_requests.py serve --port 0
    (daemon_kb_load.py --requests DIR does this)

On exit writes DIR/calls.json: per plugin.op the number of calls and the median / max request and reply
bytes; DIR/<plugin>.<op>.<n>.json: the first bodies of each (12, PERF_REQUESTS_SAMPLES=n for more; every n-th with PERF_REQUESTS_EVERY=n) (replay them in-process with a profiler:
bench/replay_request.py), and DIR/<plugin>.<op>.<n>.reply.md: the CNL reply to it (the kernel's reply parse:
bench/reply_parse.py). No project change: the wrapper patches Supervisor._call.
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import json
import os
import sys

import mrpvm.kernel.supervisor.core as core

SAMPLES = int(os.environ.get("PERF_REQUESTS_SAMPLES", "12"))  # bodies kept per plugin.op
EVERY = int(os.environ.get("PERF_REQUESTS_EVERY", "1"))  # keep every n-th call's body (past a warm-up)
SIZES: dict[str, list[tuple[int, int]]] = {}
BODY: contextvars.ContextVar[dict[str, bytes] | None] = contextvars.ContextVar("body", default=None)


def install(out: str) -> None:
    orig_call = core.Supervisor._call
    orig_encode = core.encode_request

    def encode_request(request):  # type: ignore[no-untyped-def]
        body = orig_encode(request)
        held = BODY.get()
        if held is not None:
            held["body"] = body
        return body

    core.encode_request = encode_request

    @functools.wraps(orig_call)
    async def _call(self, plugin_id, request, timeout_s, *rest):  # type: ignore[no-untyped-def]
        held: dict[str, bytes] = {}
        BODY.set(held)
        result = await orig_call(self, plugin_id, request, timeout_s, *rest)
        body = held.get("body", b"")
        key = f"{plugin_id}.{result.op}"
        rows = SIZES.setdefault(key, [])
        if len(rows) % EVERY == 0 and len(rows) // EVERY < SAMPLES:
            with open(os.path.join(out, f"{key}.{len(rows) // EVERY}.json"), "wb") as f:
                f.write(body)
            if result.cnl:
                with open(os.path.join(out, f"{key}.{len(rows) // EVERY}.reply.md"), "w") as f:
                    f.write(result.cnl)
        reply = result.cnl
        rows.append((len(body), len(reply)))
        return result

    core.Supervisor._call = _call  # type: ignore[method-assign]

    def dump() -> None:
        table = {}
        for key, rows in SIZES.items():
            req = sorted(r[0] for r in rows)
            rep = sorted(r[1] for r in rows)
            table[key] = {
                "calls": len(rows),
                "request_bytes_median": req[len(req) // 2],
                "request_bytes_max": req[-1],
                "reply_chars_median": rep[len(rep) // 2],
                "reply_chars_max": rep[-1],
            }
        with open(os.path.join(out, "calls.json"), "w") as f:
            json.dump(table, f, indent=1)

    atexit.register(dump)


if __name__ == "__main__":
    install(os.environ["PERF_REQUESTS"])
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
