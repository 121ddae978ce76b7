"""What `mrpvm config show` and `/ready` say about the whole-sandbox limits (cgroups.py `status`)."""

from __future__ import annotations

import msgspec


class LimitsStatus(msgspec.Struct, kw_only=True):
    """The whole-sandbox limits in force on this machine (part of the sandbox status)."""

    mechanism: (
        str  # "cgroup v2", "cgroup v1", "rlimit (RLIMIT_NPROC in the sandbox's user namespace)", "none"
    )
    processes: int = 0  # processes and threads of one plugin and its children together; 0: no cap
    memoryMB: int = 0  # memory of one plugin and its children together; 0: per process only (RLIMIT_AS)
    reason: str = ""  # why control groups are not used
