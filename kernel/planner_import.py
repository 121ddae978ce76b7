"""Importing what planners learned before the store kept it (schema 8): `utility.json` files.

Until then a planner kept its utility table in its artifacts folder, one per KB scope and machine
(`<home>/artifacts/<kb id or _session>/<planner id>/utility.json`). When a kernel opens, each such file is
merged into the shared records (kernel/store_learning.py) once: the store remembers the file's content
digest, so a second node holding a copy of the same file, or a crash before the file is renamed, imports
nothing twice; records already in the store are averaged with the file's by their samples. The file is
then renamed `utility.json.imported` (kept for the user, never read again). A file that does not decode
as the built-in planners' format (a foreign planner's own file) is left alone.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from mrpvm.protocol.envelope import LearnedStat

if TYPE_CHECKING:
    from .store import Store

LEGACY_FILE = "utility.json"
IMPORTED_SUFFIX = ".imported"
SESSION_SCOPE = "_session"  # the artifacts folder of sessions without a KB (kernel/context.py)
MAX_FILE_BYTES = 64 << 20
log = logging.getLogger("mrpvm.planner_import")


class _Stat(msgspec.Struct):
    successRate: float = 0.5
    latencyMs: float = 0.0
    llmCalls: float = 0.0
    sufficiency: float = 0.5
    samples: int = 0


class _Record(msgspec.Struct):
    overall: _Stat = msgspec.field(default_factory=_Stat)
    acts: dict[str, _Stat] = {}


class _Table(msgspec.Struct):
    """The legacy file (plugins/planner_common/utility.py before schema 8)."""

    plugins: dict[str, _Record] = {}


_decoder = msgspec.json.Decoder(_Table)


def legacy_stats(table: _Table) -> list[LearnedStat]:
    out: list[LearnedStat] = []
    for plugin_id, record in sorted(table.plugins.items()):
        for task, stat in [("", record.overall), *sorted(record.acts.items())]:
            if stat.samples > 0:
                out.append(
                    LearnedStat(
                        pluginId=plugin_id,
                        task=task,
                        successRate=min(1.0, max(0.0, stat.successRate)),
                        latencyMs=max(0.0, stat.latencyMs),
                        llmCalls=max(0.0, stat.llmCalls),
                        sufficiency=min(1.0, max(0.0, stat.sufficiency)),
                        samples=stat.samples,
                    )
                )
    return out


def import_planner_files(store: Store, home: Path, planner_ids: list[str]) -> int:
    """Merge every planner's legacy utility.json under `home` into the store; returns the files imported."""
    root = Path(home) / "artifacts"
    if not root.is_dir():
        return 0
    imported = 0
    kbs = {kb.id for kb in store.list_kbs()}
    for planner_id in planner_ids:
        for path in sorted(root.glob(f"*/{planner_id}/{LEGACY_FILE}")):
            scope = path.parent.parent.name
            kb_id = None if scope == SESSION_SCOPE else scope
            if kb_id is not None and kb_id not in kbs:
                continue  # the folder of a deleted KB: nothing to learn for
            try:
                data = path.read_bytes()[:MAX_FILE_BYTES]
                stats = legacy_stats(_decoder.decode(data))
            except (OSError, msgspec.DecodeError) as err:
                log.warning("%s not imported: %s", path, err)
                continue
            digest = hashlib.sha256(f"{planner_id}\0{scope}\0".encode() + data).hexdigest()
            if store.import_learned(digest, planner_id, kb_id, stats):
                imported += 1
            try:
                path.rename(path.with_name(LEGACY_FILE + IMPORTED_SUFFIX))
            except OSError as err:  # the digest keeps it from being imported twice anyway
                log.warning("%s imported but not renamed: %s", path, err)
    return imported
