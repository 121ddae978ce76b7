"""sd-symbolic forks its second half only when a second core is likely free (session 29): on a machine whose
cores are all busy the child only takes turns with the parent, and costs its fork and transfers for nothing.
The units are the same either way (test_sd_symbolic_halves.py)."""

from __future__ import annotations

import pytest
from mrpvm.plugins.sd_symbolic.source_units import halves
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

META = SourceMeta("src-big", "big.md", "text", created_at="2026-01-01T00:00:00+00:00")


def _machine(monkeypatch: pytest.MonkeyPatch, cpus: int, load: float | None) -> None:
    def loadavg() -> tuple[float, float, float]:
        if load is None:
            raise OSError("no load average")
        return (load, load, load)

    monkeypatch.setattr(halves, "cores", lambda: cpus)
    monkeypatch.setattr(halves.os, "getloadavg", loadavg)


@pytest.mark.parametrize(
    ("cpus", "load", "chars", "expected"),
    [
        (2, 0.3, halves.MIN_CHARS, True),  # a quiet machine
        (2, 1.9, halves.MIN_CHARS * 10, True),  # a core idle on average
        (2, 2.0, halves.MIN_CHARS * 10, False),  # every core busy
        (2, 7.5, halves.MIN_CHARS * 10, False),
        (8, 7.5, halves.MIN_CHARS, True),
        (1, 0.0, halves.MIN_CHARS * 10, False),  # one CPU
        (2, 0.0, halves.MIN_CHARS - 1, False),  # too small to pay for a fork
        (2, None, halves.MIN_CHARS, True),  # no load average: as before
    ],
)
def test_worth_halves(
    monkeypatch: pytest.MonkeyPatch, cpus: int, load: float | None, chars: int, expected: bool
) -> None:
    _machine(monkeypatch, cpus, load)
    assert halves.worth_halves(chars) is expected


def _text() -> str:
    para = "The ferry {0} crosses the strait. The crane {0} lifts it onto the quay at dawn.\n\n"
    text = "".join(f"## Dock {i}\n\n" + para.format(i) * 3 for i in range(900))
    assert len(text) >= halves.MIN_CHARS
    return text


def test_busy_cores_build_without_a_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _text()
    serial = build_tree(text, META, halves=False)
    forks: list[int] = []
    real_fork = halves._fork

    def counted(work):  # type: ignore[no-untyped-def]
        forks.append(1)
        return real_fork(work)

    monkeypatch.setattr(halves, "_fork", counted)
    _machine(monkeypatch, 2, 6.0)
    assert build_tree(text, META) == serial
    assert forks == []
    _machine(monkeypatch, 2, 0.2)
    assert build_tree(text, META) == serial
    assert len(forks) == 2  # the pieces and the sections' units
