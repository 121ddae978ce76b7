"""protocol/gc_pause.py: the cyclic GC is off inside a pause, pauses nest and overlap across threads, and
the collector's own state (on, or off by choice) is what remains after the last one ends."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest
from mrpvm.protocol.gc_pause import (
    SERVING_THRESHOLD,
    STARTUP_THRESHOLD,
    defer_startup_collections,
    end_startup,
    freeze_startup_objects,
    paused_gc,
)


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_a_pause_turns_the_collector_off_and_back_on():
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_end_with_the_outermost():
    with paused_gc():
        with paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off():
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_an_exception_inside_still_ends_the_pause():
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_when_the_last_one_does():
    inside, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with paused_gc():
            inside.set()
            release.wait(10)
        seen.append(gc.isenabled())

    thread = threading.Thread(target=other)
    with paused_gc():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause is still on
    release.set()
    thread.join(10)
    assert seen == [True] and gc.isenabled()


def _process_thresholds(code: str, *args: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, *args, "-c", code] if args else [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout.split()


def test_a_start_defers_young_collections_until_it_ends():
    before = gc.get_threshold()
    try:
        defer_startup_collections()
        defer_startup_collections()  # a second call changes nothing: the end restores the first thresholds
        assert gc.get_threshold() == (STARTUP_THRESHOLD, *before[1:])
        end_startup()
        assert gc.get_threshold() == before
        end_startup()  # nothing to restore
        assert gc.get_threshold() == before
        defer_startup_collections()
        freeze_startup_objects()  # the SDK's main: the start is over
        assert gc.get_threshold() == before
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_a_server_freezes_its_start_and_collects_young_objects_less_often():
    code = (
        "import gc\n"
        "from mrpvm.protocol.gc_pause import defer_startup_collections, settle_for_serving\n"
        "usual = gc.get_threshold()\n"
        "defer_startup_collections()\n"
        "settle_for_serving()\n"
        "print(gc.get_freeze_count() > 0, gc.get_threshold()[1:] == usual[1:], gc.get_threshold()[0])\n"
        "gc.collect()  # a full collection after it still frees a cycle\n"
        "a = []; a.append(a); del a\n"
        "print(gc.collect() >= 1)\n"
    )
    assert _process_thresholds(code) == ["True", "True", str(SERVING_THRESHOLD), "True"]


def test_only_a_process_started_as_a_plugin_module_defers_its_collections():
    code = "import sys, gc; sys.argv[0] = ARGV; import mrpvm.plugins; print(gc.get_threshold()[0])"
    as_module = _process_thresholds(code.replace("ARGV", "'-m'"))
    imported = _process_thresholds(code.replace("ARGV", "'tool.py'"))
    assert as_module == [str(STARTUP_THRESHOLD)] and imported == [str(gc.get_threshold()[0])]


def test_the_full_cli_runs_its_command_with_the_usual_thresholds():
    code = (
        "import gc, sys\n"
        "from mrpvm.shells.cli import main as cli\n"
        "seen = []\n"
        "pick = cli.app_for\n"
        "def app(args):\n"
        "    real = pick(args)\n"
        "    def run(**kw):\n"
        "        seen.append(gc.get_threshold()[0])\n"
        "        return 0\n"
        "    return run\n"
        "cli.app_for = app\n"
        "from mrpvm.protocol.gc_pause import defer_startup_collections\n"
        "defer_startup_collections()\n"
        "cli._run(['config', 'show'])\n"
        "print(seen[0])\n"
    )
    assert _process_thresholds(code) == [str(gc.get_threshold()[0])]
