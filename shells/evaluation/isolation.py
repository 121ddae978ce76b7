"""What the engine learns while an evaluation runs, put back after every suite run.

Planners learn per plugin (their records in the store, kernel/store_learning.py) and the kernel keeps
planner-level records; both carry from one turn to the next, which is the point in use. In an evaluation they would make
a suite's score depend on the suites run before it, so every run starts from what the home held before
the evaluation, and the home is left as it was found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


class Learned:
    """A copy of the planner-level records and of the planners' per-plugin records."""

    def __init__(self, ctx: KernelContext):
        self.ctx = ctx
        self.stats = ctx.store.planner_stats()
        self.records = ctx.store.learning_snapshot()

    def restore(self) -> None:
        self.ctx.store.restore_planner_stats(self.stats)
        self.ctx.store.restore_learning(self.records)

    def discard(self) -> None:
        """Nothing outside the store to clean up (kept for the callers' protocol)."""


def planner_records(ctx: KernelContext) -> dict[str, object]:
    """What the planners have learned, as stored: each planner's per-plugin records (overall and per
    act/answer type) in the scope of sessions without a KB, and the kernel's planner-level records."""
    tables: dict[str, object] = {}
    for row in ctx.store.learning_snapshot():
        if row.kbKey:
            continue
        plugins = tables.setdefault(row.plannerId, {"plugins": {}})["plugins"]  # type: ignore[index]
        record = plugins.setdefault(row.stat.pluginId, {"overall": None, "acts": {}})
        stat = _builtins(row.stat)
        if row.stat.task:
            record["acts"][row.stat.task] = stat
        else:
            record["overall"] = stat
    stats = {k: _builtins(v) for k, v in ctx.store.planner_stats().items()}
    return {"planners": tables, "plannerStats": stats}


def _builtins(value: object) -> object:
    import msgspec

    try:
        return msgspec.to_builtins(value)
    except TypeError:
        return repr(value)
