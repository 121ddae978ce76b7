"""The daemon's py-spy samples (`daemon_kb_load.py --pyspy N --pyspy-gil`, raw format) by what they were doing.

    python3 bench/pyspy_shares.py perf-pyspy.txt

Each stack is counted once, under the first group (in the order below) one of its frames names; the rest is
"event loop and rest". Only the daemon's own stacks are read (a worker's, recorded with --subprocesses, are
skipped).
"""

from __future__ import annotations

import collections
import sys

GROUPS = [
    ("HTTP socket writes (uvicorn send, GIL held)", ["RequestResponseCycle.send"]),
    ("plugin reply parse (CNL)", ["read_reply"]),
    ("store: trace re-stored after recordOutcome", ["TurnTables._set_trace", "trace_of"]),
    ("store: turn commit", ["TurnTables.commit_turn"]),
    ("store: outcome folds", ["_fold_many"]),
    (
        "store: per-turn reads",
        ["PlannerLearning.learned", "get_session", "list_sources", "find_kb", "session_units"]
        + ["recent_user_messages", "planner_stats", "get_kb"],
    ),
    ("trace: to_builtins at commit", ["TraceRecorder.to_builtins"]),
    (
        "request build + encode + pipe write",
        ["encode_request", "encode_frame", "build_request", "WorkerPool.submit", "ChildProcess.write"],
    ),
    ("trace nodes + call summaries", ["TraceRecorder.", "summarize_output", "settle_attempt"]),
    ("worker stdout read", ["poll_stdout", "_on_stdout", "FrameReader"]),
    ("timers: stray sweeps + cgroup checks", ["Worker._sweep", "_check_group"]),
    ("HTTP body decode / JSON response", ["read_json", "json_response"]),
    ("engine logic (rest of a turn)", ["run_turn"]),
    ("recordOutcome batching (rest)", ["OutcomeBatcher"]),
    ("HTTP framework (uvicorn/starlette/middleware, rest)", ["run_asgi", "Guard.__call__"]),
]


def main() -> None:
    shares: collections.Counter[str] = collections.Counter()
    total = 0
    with open(sys.argv[1]) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if ";process " in stack:  # a worker's stack under the daemon's
                continue
            n = int(count)
            total += n
            frames = stack.split(";")[1:]
            group = next(
                (name for name, keys in GROUPS if any(k in fr for fr in frames for k in keys)),
                "event loop and rest",
            )
            shares[group] += n
    for name, n in shares.most_common():
        print(f"{100 * n / max(1, total):5.1f} %  {name}")
    print(f"{total} samples")


if __name__ == "__main__":
    main()
