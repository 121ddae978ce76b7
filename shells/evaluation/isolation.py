"""What the engine learns while an evaluation runs, put back after every suite run.

Planners learn per plugin (a utility table in their artifacts folder) and the kernel keeps planner-level
records; both carry from one turn to the next, which is the point in use. In an evaluation they would make
a suite's score depend on the suites run before it, so every run starts from what the home held before
the evaluation, and the home is left as it was found.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

PLANNER_TYPE = "mrp-plan-plugin"


class Learned:
    """A copy of the planner records and of the planners' session artifacts folders."""

    def __init__(self, ctx: KernelContext):
        self.ctx = ctx
        self.stats = ctx.store.planner_stats()
        self.saved = Path(tempfile.mkdtemp(prefix="mrpvm-eval-"))
        self.folders = {e.id: ctx.artifacts_dir(None, e.id) for e in ctx.registry.list(PLANNER_TYPE)}
        for plugin_id, folder in self.folders.items():
            if folder.is_dir():
                shutil.copytree(folder, self.saved / plugin_id)

    def restore(self) -> None:
        self.ctx.store.restore_planner_stats(self.stats)
        for plugin_id, folder in self.folders.items():
            shutil.rmtree(folder, ignore_errors=True)
            kept = self.saved / plugin_id
            if kept.is_dir():
                shutil.copytree(kept, folder)

    def discard(self) -> None:
        shutil.rmtree(self.saved, ignore_errors=True)


def planner_records(ctx: KernelContext) -> dict[str, object]:
    """What the planners have learned, as stored: each planner's utility table (per plugin, overall and
    per act/answer type) and the kernel's planner-level records."""
    import json

    tables: dict[str, object] = {}
    for entry in ctx.registry.list(PLANNER_TYPE):
        path = ctx.artifacts_dir(None, entry.id) / "utility.json"
        try:
            tables[entry.id] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    stats = {k: _builtins(v) for k, v in ctx.store.planner_stats().items()}
    return {"planners": tables, "plannerStats": stats}


def _builtins(value: object) -> object:
    import msgspec

    try:
        return msgspec.to_builtins(value)
    except TypeError:
        return repr(value)
