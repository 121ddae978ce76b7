"""A units file handed to several kb-plugins is one copy of the bytes (kernel/supervisor/handoff.py): each
plugin's folder holds its own read-only name for it, removed with its call, the others' unaffected."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mrpvm.kernel.supervisor.handoff import FILE_MODE, HandoffFolder

DATA = b"\x85units file bytes" * 1000


def test_the_file_for_a_second_plugin_is_a_link_to_the_first(tmp_path: Path) -> None:
    first_folder, second_folder = HandoffFolder(str(tmp_path), "kb-a"), HandoffFolder(str(tmp_path), "kb-b")
    first = first_folder.write(DATA)
    second = second_folder.write(DATA, like=first)
    assert os.path.dirname(second) == second_folder.path and os.path.basename(second) != os.path.basename(
        first
    )
    one, two = os.stat(first), os.stat(second)
    assert (one.st_ino, one.st_dev) == (two.st_ino, two.st_dev) and two.st_nlink == 2
    assert stat.S_IMODE(two.st_mode) == FILE_MODE
    HandoffFolder.discard(first)  # the first call ended: the second plugin still reads its file
    assert Path(second).read_bytes() == DATA and os.stat(second).st_nlink == 1
    HandoffFolder.discard(second)
    assert not os.path.exists(second)


def test_a_file_that_cannot_be_linked_is_written(tmp_path: Path) -> None:
    folder = HandoffFolder(str(tmp_path), "kb-b")
    path = folder.write(DATA, like=str(tmp_path / "gone.units.msgpack"))
    assert Path(path).read_bytes() == DATA and os.stat(path).st_nlink == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == FILE_MODE
