"""A kept sandbox probe (kernel/supervisor/probe_cache.py) that vouched for a sandbox which then fails to
start is removed, so the next process probes again (and says why plugins cannot be sandboxed); a plugin
that fails on its own, inside a sandbox that started, leaves the record alone.

A stand-in bwrap passes the probe (`--version`, a sandbox around `true`) and, for a plugin's sandbox,
either fails as bubblewrap does ("bwrap: …" on stderr, exit 1) once a BROKEN file exists, or runs the
plugin's command line itself (unconfined: this test is about the record, test_sandbox.py about confinement).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import CRASHED, PLUGIN_ERROR, Supervisor, probe_cache, sandbox
from mrpvm.kernel.supervisor.sandbox import Sandbox
from supervisor_support import build_registry, error_of, limits, request, run

FAKE = """#!/bin/sh
if [ "$1" = --version ]; then echo "bubblewrap 0.0.1"; exit 0; fi
case " $* " in *" --new-session "*) ;; *) exit 0 ;; esac
if [ -e {broken} ]; then echo "bwrap: Creating new namespace failed: Operation not permitted" >&2; exit 1; fi
while [ $# -gt 0 ] && [ "$1" != --chdir ]; do shift; done
cd "$2" || exit 1
shift 3
exec "$@"
"""


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    """(the home, with a probe kept for the stand-in bwrap; the file whose presence breaks its sandboxes)."""
    binary, home, broken = tmp_path / "bin", tmp_path / "home", tmp_path / "BROKEN"
    binary.mkdir()
    home.mkdir()
    bwrap = binary / "bwrap"
    bwrap.write_text(FAKE.format(broken=broken))
    bwrap.chmod(0o755)
    monkeypatch.setattr(sandbox, "_which", lambda name: str(bwrap) if name == "bwrap" else None)
    monkeypatch.setattr(sandbox, "_early", {})
    monkeypatch.setattr(sandbox, "_kept", {})
    sandbox._probe.cache_clear()
    sandbox.probe_early(SandboxConfig(), home)
    assert sandbox.sandbox_status(SandboxConfig()).active
    assert (home / probe_cache.RECORD).exists()
    # a later process: the kept probe vouches for the sandbox, nothing is probed
    sandbox._early.clear()
    sandbox._probe.cache_clear()
    sandbox.probe_early(SandboxConfig(), home)
    assert sandbox._kept and not sandbox._early
    yield home, broken
    sandbox._probe.cache_clear()


def call_error(registry: Registry, home: Path, plugin: str, prompt: str) -> str:
    async def go() -> str:
        box = Sandbox(SandboxConfig(mode="require"), home=home)
        assert box.active
        async with Supervisor(registry, limits=limits(), sandbox=box) as sup:
            return (await error_of(sup.call(plugin, request(prompt)))).error.code

    return run(go, limit_s=60)


@pytest.mark.parametrize("plugin", ["echo-worker", "echo-oneshot"])
def test_a_sandbox_that_fails_to_start_removes_the_kept_probe(registry, fake, plugin):
    home, broken = fake
    broken.touch()
    assert call_error(registry, home, plugin, "hello") in (CRASHED, PLUGIN_ERROR)  # a one-shot's exit 1
    assert not (home / probe_cache.RECORD).exists()


@pytest.mark.parametrize("plugin", ["bad-worker", "bad-oneshot"])
def test_a_plugin_that_fails_on_its_own_keeps_the_probe(registry, fake, plugin):
    home, _ = fake
    assert call_error(registry, home, plugin, "crash") in (CRASHED, PLUGIN_ERROR)
    assert (home / probe_cache.RECORD).exists()


def test_only_bubblewraps_own_error_counts():
    assert probe_cache.failed_in_bwrap(b"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n")
    assert probe_cache.failed_in_bwrap(b"some warning\nbwrap: setting up uid map: Permission denied")
    assert not probe_cache.failed_in_bwrap(b"Traceback (most recent call last):\n  ValueError: bwrap: no\n")
    assert not probe_cache.failed_in_bwrap(b"")
