"""bubblewrap's positive probe kept in the kernel home (kernel/supervisor/probe_cache.py): the next process
with the same bwrap binary runs no probe; a changed binary, a failed probe or a record others may write
means a real probe, as without the cache."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.supervisor import probe_cache, sandbox

FAKE = """#!/bin/sh
echo "$@" >> {log}
if [ "$1" = --version ]; then echo "bubblewrap {version}"; exit 0; fi
exit {code}
"""


def fake_bwrap(folder: Path, log: Path, version: str = "0.0.1", code: int = 0) -> Path:
    """A stand-in bwrap that logs its calls: `--version` prints a version, any sandbox exits `code`."""
    path = folder / "bwrap"
    path.write_text(FAKE.format(log=log, version=version, code=code))
    path.chmod(0o755)
    return path


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A new process's probe state each time it is called, with the fake binary found on PATH."""
    binary = tmp_path / "bin"
    binary.mkdir()
    monkeypatch.setattr(sandbox, "_which", lambda name: str(binary / name))
    monkeypatch.setattr(sandbox, "_early", {})
    monkeypatch.setattr(sandbox, "_kept", {})

    def new_process() -> None:
        sandbox._early.clear()
        sandbox._kept.clear()
        sandbox._probe.cache_clear()

    new_process()
    yield binary, new_process
    sandbox._probe.cache_clear()


def status_of(home: Path) -> sandbox.SandboxStatus:
    """What KernelContext.open does: the early probe with the home, then the Sandbox's status."""
    sandbox.probe_early(SandboxConfig(), home)
    return sandbox.sandbox_status(SandboxConfig())


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_kept_positive_probe_runs_nothing_in_the_next_process(fresh, tmp_path):
    binary, new_process = fresh
    home, log = tmp_path / "home", tmp_path / "calls.log"
    home.mkdir()
    fake_bwrap(binary, log, version="0.0.1")
    first = status_of(home)
    assert first.active and first.mechanism == "bubblewrap 0.0.1" and calls(log) == 2
    record = home / probe_cache.RECORD
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    new_process()
    second = status_of(home)
    assert second == first and calls(log) == 2  # no `--version`, no sandbox around `true`


def test_a_changed_binary_is_probed_again(fresh, tmp_path):
    binary, new_process = fresh
    home, log = tmp_path / "home", tmp_path / "calls.log"
    home.mkdir()
    fake_bwrap(binary, log, version="0.0.1")
    status_of(home)
    new_process()
    fake_bwrap(binary, log, version="0.0.22")  # an upgrade: another size and mtime
    assert status_of(home).mechanism == "bubblewrap 0.0.22" and calls(log) == 4
    new_process()
    path = binary / "bwrap"
    os.replace(path, binary / "old")  # the same bytes, another file (inode)
    path.write_bytes((binary / "old").read_bytes())
    path.chmod(0o755)
    assert status_of(home).active and calls(log) == 6


def test_a_failed_probe_is_never_kept(fresh, tmp_path):
    binary, new_process = fresh
    home, log = tmp_path / "home", tmp_path / "calls.log"
    home.mkdir()
    fake_bwrap(binary, log, code=1)
    assert not status_of(home).active
    assert not (home / probe_cache.RECORD).exists()
    new_process()
    assert not status_of(home).active and calls(log) == 4  # the reason is found again, every process


def test_a_record_others_may_write_is_ignored(fresh, tmp_path):
    binary, new_process = fresh
    home, log = tmp_path / "home", tmp_path / "calls.log"
    home.mkdir()
    fake_bwrap(binary, log)
    status_of(home)
    (home / probe_cache.RECORD).chmod(0o622)
    new_process()
    assert status_of(home).active and calls(log) == 4


def test_the_fingerprint_holds_the_binary_the_machine_and_the_probe():
    key = probe_cache.fingerprint("/bin/sh", ["/bin/sh", "--", "true"])
    assert key is not None and key["real"] == os.path.realpath("/bin/sh")
    assert "/proc/sys/kernel/random/boot_id" in key["machine"]  # type: ignore[operator]
    assert probe_cache.fingerprint("/nonexistent/bwrap", []) is None
    assert probe_cache.fingerprint("/bin/sh", ["/bin/sh", "--x"]) != key
