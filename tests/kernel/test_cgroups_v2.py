"""The cgroup v2 path of the whole-sandbox limits, on a folder shaped like a cgroup2 mount.

This machine (and CI) mounts cgroup v1, where tests/kernel/test_sandbox_limits.py runs the real limits.
Here the v2 decisions are exercised on a tree with the files a cgroup2 hierarchy has: which group is used
(the kernel's own when it delegates, else the top), enabling pids and memory in `cgroup.subtree_control`,
the limit files written for a plugin group, and the counters that end a sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mrpvm.kernel.supervisor import cgroups


def _hierarchy(root: Path, own: str, delegated: str) -> Path:
    """A cgroup2-shaped tree: the top group and the kernel's own group `own`, each with subtree_control."""
    (root / "cgroup.subtree_control").write_text("cpu io memory pids\n")
    group = root / own.strip("/")
    group.mkdir(parents=True)
    (group / "cgroup.subtree_control").write_text(delegated)
    return group


def _use(monkeypatch: pytest.MonkeyPatch, root: Path, own: str) -> None:
    monkeypatch.setattr(cgroups, "_mounts", lambda: [(str(root), "/", "cgroup2", {"rw"})])
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"": own})
    cgroups.layout.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_layout():
    cgroups.layout.cache_clear()
    yield
    cgroups.layout.cache_clear()


def test_a_delegating_own_group_is_used_and_its_controllers_enabled(tmp_path, monkeypatch):
    group = _hierarchy(tmp_path, "/user.slice/mrpvm.service", delegated="")
    _use(monkeypatch, tmp_path, "/user.slice/mrpvm.service")
    found = cgroups.layout()
    assert isinstance(found, cgroups._Layout) and found.version == 2
    assert Path(found.pids_base).parent == group and found.pids_base == found.memory_base
    assert (group / "cgroup.subtree_control").read_text() == "+pids +memory"
    assert cgroups.status(64, 512, sandboxed=True).mechanism == "cgroup v2"


def test_a_group_that_cannot_delegate_falls_back_to_the_top(tmp_path, monkeypatch):
    group = _hierarchy(tmp_path, "/service", delegated="")
    (group / "cgroup.subtree_control").unlink()
    (group / "cgroup.subtree_control").mkdir()  # not a writable file: this group cannot delegate
    _use(monkeypatch, tmp_path, "/service")
    found = cgroups.layout()
    assert isinstance(found, cgroups._Layout)
    assert Path(found.pids_base).parent == tmp_path


def test_no_cgroup2_mount_is_said_with_the_reason(monkeypatch):
    monkeypatch.setattr(cgroups, "_mounts", lambda: [])
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {})
    monkeypatch.setattr(cgroups, "nproc_applies", lambda: False)
    status = cgroups.status(64, 512, sandboxed=True)
    assert status.mechanism == "none" and "no cgroup v2 hierarchy" in status.reason


def test_a_plugin_group_gets_v2_limits_and_its_counters_end_it(tmp_path, monkeypatch):
    _hierarchy(tmp_path, "/kernel", delegated="memory pids")
    _use(monkeypatch, tmp_path, "/kernel")
    group = cgroups.new_group(processes=64, memory_bytes=256 << 20)
    assert group is not None and group.version == 2
    folder = Path(group.pids_dir)
    assert (folder / "pids.max").read_text() == "64"
    assert (folder / "memory.max").read_text() == str(256 << 20)
    assert (folder / "memory.swap.max").read_text() == "0"
    launcher = group.launcher(["plugin", "--flag"])
    assert launcher[-2:] == ["plugin", "--flag"] and launcher.count(str(folder / "cgroup.procs")) == 2
    assert group.exceeded() is None
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    reason = group.exceeded()
    assert reason is not None and "memory limit (256 MB together" in reason
    (folder / "pids.events").write_text("max 2\n")
    reason = group.exceeded()
    assert reason is not None and "process limit (64 processes" in reason
    for name in ("pids.max", "memory.max", "memory.swap.max", "memory.events", "pids.events"):
        (folder / name).unlink()  # a real cgroupfs removes its files with the group
    assert group.release() and not folder.exists()
