"""`mrpvm serve` with every SQLite statement's CPU timed on the calling thread, from SIGUSR1 on.

    PERF_SQLTIME=out.json CHECKOUT/.venv/bin/python daemon_sqltime.py serve --port 0
    (daemon_kb_load.py --sqltime out.json signals it after the warm-up)

On exit writes, per statement (its first 70 characters, whitespace folded): calls and thread CPU µs
(`time.thread_time_ns` around `execute` / `executemany` and the cursor's fetches), largest first.
No project change: `sqlite3.connect` is given a Connection subclass before the store is imported.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import sqlite3
import sys
import time

STATS: dict[str, list[int]] = {}
ON = [False]
_clock = time.thread_time_ns


def _key(sql: str) -> str:
    return " ".join(sql.split())[:70]


def _add(key: str, ns: int) -> None:
    entry = STATS.get(key)
    if entry is None:
        entry = STATS[key] = [0, 0]
    entry[0] += 1
    entry[1] += ns


class TimedConnection(sqlite3.Connection):
    last = ""  # the transaction's first statement after BEGIN: a COMMIT is counted under it

    def execute(self, sql, *args):  # type: ignore[no-untyped-def,override]
        if not ON[0]:
            return super().execute(sql, *args)
        t = _clock()
        cur = super().execute(sql, *args)
        ns = _clock() - t
        key = _key(sql)
        if key == "COMMIT":
            key = "COMMIT of: " + self.last[:50]
            self.last = ""
        elif key != "BEGIN IMMEDIATE" and not self.last and self.in_transaction:
            self.last = key
        _add(key, ns)
        return cur

    def executemany(self, sql, *args):  # type: ignore[no-untyped-def,override]
        if not ON[0]:
            return super().executemany(sql, *args)
        t = _clock()
        cur = super().executemany(sql, *args)
        if not self.last and self.in_transaction:
            self.last = "many: " + _key(sql)
        _add("many: " + _key(sql), _clock() - t)
        return cur


_connect = sqlite3.connect


def connect(*args, **kwargs):  # type: ignore[no-untyped-def]
    kwargs.setdefault("factory", TimedConnection)
    return _connect(*args, **kwargs)


def _dump() -> None:
    rows = sorted(STATS.items(), key=lambda kv: -kv[1][1])
    out = [{"sql": k, "calls": c, "cpu_us": round(ns / 1000)} for k, (c, ns) in rows]
    with open(os.environ["PERF_SQLTIME"], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    sqlite3.connect = connect  # type: ignore[assignment]
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, lambda *_: ON.__setitem__(0, True))
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
