"""A worker's steps for bench/cold_ask_timeline.py --workers (plugins/sdk/marks.py): one stderr line per step on
CLOCK_MONOTONIC with the process's CPU when MRPVM_WORKER_MARKS=1, nothing otherwise."""

from __future__ import annotations

import re
import time

import pytest
from mrpvm.plugins.sdk import marks


def test_a_mark_is_one_line_on_the_machine_s_clock(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(marks, "ON", True)
    before = time.monotonic()
    marks.mark("> retrieve")
    line = capfd.readouterr().err
    m = re.fullmatch(r"mark ([\d.]+) (\d+) > retrieve\n", line)
    assert m is not None and before - 0.001 <= float(m.group(1)) <= time.monotonic() + 0.001


def test_no_mark_when_off(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(marks, "ON", False)
    marks.mark("started")
    assert capfd.readouterr().err == ""
