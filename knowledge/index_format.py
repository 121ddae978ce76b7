"""The index format each kb-plugin's acknowledgements were made under, and the rebuild when it changes.

A kb-plugin may declare the format of the index it keeps (manifest `indexFormat`, protocol/SPEC.md Index
format). The kernel records, per node, KB and plugin, the format the plugin's index of the KB is written
in: a marker file it owns beside the plugin's artifacts folder (`<home>/artifacts/<kb>/<plugin>.format`,
outside the plugin's sandbox; the artifacts are per node, and `kb rm` removes it with them). It is written
before the kernel offers the plugin a source (`note`), so an index the plugin builds has it.

When a kernel opens (knowledge/reindex.py `start_node`) or `kb check` repairs, `stale` lists the indexes
whose recorded format differs from the declared one, or that the ledger says hold sources while their folder
is empty (removed by hand), and `rebuild` makes each owe everything: its folder goes, the plugin's
acknowledgements of the KB are forgotten (knowledge/index_ledger.py), then the new format is recorded, and
the re-offer that follows rebuilds the index. Each step repeats harmlessly, so a kernel killed halfway leaves
a state the next open finishes: before the marker is written the index is still stale; after it, what is not
acknowledged is owed. A folder holding an index without a marker was built before markers existed, by the
plugin as installed then: it is adopted as the declared format. A plugin that declares no format is left as
it was.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from mrpvm.kernel.registry import PluginEntry

from . import index_ledger as ledger

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


class StaleIndex(msgspec.Struct, kw_only=True, frozen=True):
    """A plugin's index of a KB on this node that must be rebuilt: `recorded` is its marker ('' when the
    index was removed by hand under the declared format), `declared` the manifest's format."""

    kbId: str
    plugin: str
    recorded: str
    declared: str

    def describe(self, kb_name: str) -> str:
        if self.recorded == self.declared:
            return f"{kb_name} -> {self.plugin}: its index folder is gone while sources are acknowledged"
        return (
            f"{kb_name} -> {self.plugin}: index format {self.recorded!r}, the plugin writes {self.declared!r}"
        )


def declared(entry: PluginEntry) -> str:
    """The manifest's `indexFormat` ('' when it declares none)."""
    return str(getattr(entry.manifest, "indexFormat", ""))


def marker(ctx: KernelContext, kb_id: str, plugin_id: str) -> Path:
    folder = ctx.artifacts_dir(kb_id, plugin_id)
    return folder.with_name(f"{folder.name}.format")


def recorded(ctx: KernelContext, kb_id: str, plugin_id: str) -> str | None:
    """The recorded format, None when there is no marker ('' when it cannot be read: no format matches)."""
    try:
        return marker(ctx, kb_id, plugin_id).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return ""


def _record(ctx: KernelContext, kb_id: str, plugin_id: str, fmt: str) -> None:
    path = marker(ctx, kb_id, plugin_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():  # not ours: an unreadable marker is replaced
        shutil.rmtree(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(fmt, encoding="utf-8")
    os.replace(tmp, path)


def note(ctx: KernelContext, kb_id: str, entry: PluginEntry) -> None:
    """Before an offer: record the declared format of an index that has no marker yet."""
    fmt = declared(entry)
    if fmt and recorded(ctx, kb_id, entry.id) is None:
        _record(ctx, kb_id, entry.id, fmt)


def holds_index(ctx: KernelContext, kb_id: str, plugin_id: str) -> bool:
    """Does this node's artifact folder hold something of the plugin's index of the KB?"""
    folder = ctx.artifacts_dir(kb_id, plugin_id)
    return folder.is_dir() and any(folder.iterdir())


def stale(
    ctx: KernelContext, entries: list[PluginEntry], kb_ids: list[str], adopt: bool = True
) -> list[StaleIndex]:
    """The indexes (of `kb_ids`, by the `entries` that declare a format) to rebuild on this node; with
    `adopt`, an unmarked index is adopted (its marker written) on the way."""
    out: list[StaleIndex] = []
    for entry in entries:
        fmt = declared(entry)
        if not fmt:
            continue
        for kb_id in kb_ids:
            held = holds_index(ctx, kb_id, entry.id)
            was = recorded(ctx, kb_id, entry.id)
            if was is None and held:
                if adopt:
                    _record(ctx, kb_id, entry.id, fmt)
            elif was is not None and was != fmt:
                out.append(StaleIndex(kbId=kb_id, plugin=entry.id, recorded=was, declared=fmt))
            elif not held and _acknowledged(ctx, kb_id, entry.id):
                out.append(StaleIndex(kbId=kb_id, plugin=entry.id, recorded=was or fmt, declared=fmt))
    return out


def _acknowledged(ctx: KernelContext, kb_id: str, plugin_id: str) -> bool:
    acks = ledger.acknowledgements(ctx.store, kb_id)
    return any(plugin_id in by_plugin or ledger.EVERY_PLUGIN in by_plugin for by_plugin in acks.values())


def rebuild(ctx: KernelContext, index: StaleIndex) -> None:
    """Make the plugin owe every source of the KB again, in an order a kill at any point repeats."""
    shutil.rmtree(ctx.artifacts_dir(index.kbId, index.plugin), ignore_errors=True)
    ledger.forget_acknowledgements(ctx.store, index.kbId, [index.plugin])
    _record(ctx, index.kbId, index.plugin, index.declared)
