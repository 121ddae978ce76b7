"""Opening a kernel with its KB layer: the kernel's context, then the KB layer's start-up repair."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mrpvm.kernel.context import KernelContext

from .reindex import start_node

if TYPE_CHECKING:
    from mrpvm.kernel.supervisor import Supervisor


async def open_context(
    environ: dict[str, str] | None = None,
    *,
    manifests_dir: Path | None = None,
    extra_env: dict[str, str] | None = None,
    repair_indexes: bool = True,
    opened: Callable[[KernelContext], object] | None = None,
    starting: Callable[[Supervisor], object] | None = None,
) -> KernelContext:
    """`KernelContext.open`, then (with `repair_indexes`) the sources and removals some kb-plugin has not
    acknowledged (a kernel killed between an ingest's commit and its notification) are offered again
    before anything else runs; `opened(ctx)` runs before that repair, `starting(supervisor)` before the
    store opens (`KernelContext.open`). Close the context with `aclose()` as usual."""
    ctx = await KernelContext.open(
        environ, manifests_dir=manifests_dir, extra_env=extra_env, opened=opened, starting=starting
    )
    try:  # this node registers, adopts what it held before nodes existed, and rebuilds what it owes
        await start_node(ctx, repair=repair_indexes)
    except BaseException:
        await ctx.aclose()
        raise
    return ctx
