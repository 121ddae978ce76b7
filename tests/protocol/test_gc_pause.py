"""protocol/gc_pause.py: the cyclic GC is off inside a pause, pauses nest and overlap across threads, and
the collector's own state (on, or off by choice) is what remains after the last one ends."""

from __future__ import annotations

import gc
import threading

import pytest
from mrpvm.protocol.gc_pause import paused_gc


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
