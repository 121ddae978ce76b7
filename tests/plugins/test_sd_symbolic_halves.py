"""sd-symbolic builds a large source's tree on two cores (source_units/halves.py): the units are exactly
the serial build's, whichever way the second half ran (a forked child, or the parent after the child
failed, died or could not start)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from itertools import takewhile
from pathlib import Path

import msgspec
import pytest
from mrpvm.plugins.sd_symbolic.source_units import halves
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_analysed_tree, build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.handoff import analyse_unit

ROOT = Path(__file__).resolve().parents[2]
META = SourceMeta("src-big", "big.md", "text", created_at="2026-01-01T00:00:00+00:00")


def big_document() -> str:
    """The project's own Markdown (headings, lists, tables, code, footnote-free prose) and the examples,
    over MIN_CHARS: a real mix of block kinds on both sides of the split."""
    parts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md"))]
    parts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.md"))]
    text = "\n\n".join(parts)
    assert len(text) >= halves.MIN_CHARS
    return text


def encoded(units: list) -> bytes:
    return msgspec.msgpack.encode(units)


def test_the_halves_build_the_serial_tree() -> None:
    text = big_document()
    serial = build_tree(text, META, halves=False)
    assert len(serial) > 200
    assert encoded(build_tree(text, META, halves=True)) == encoded(serial)
    assert encoded(build_tree(text, META)) == encoded(serial)  # automatic: large enough for halves


def _sentence(i: int) -> str:
    return f"The ferry {i} crosses the strait and the crane {i % 7} lifts it. "


ODD_SHAPES = {
    "one paragraph": "".join(_sentence(i) for i in range(800)),  # one block: nothing to split
    "one code block": "```\n" + "\n".join(f"x = {i}" for i in range(3000)) + "\n```\n",
    "a heading per sentence": "".join(f"# H{i}\n\n{_sentence(i)}\n\n" for i in range(600)),
    "a long table": "| a | b |\n|---|---|\n" + "".join(f"| r{i} | {_sentence(i)} |\n" for i in range(800)),
    "CRLF, non-ASCII, a footnote cited everywhere": "\r\n".join(
        f"## Über {i}\r\n\r\nDie Fähre fährt — {_sentence(i)} [^1]\r\n" for i in range(400)
    )
    + "\r\n[^1]: A footnote cited everywhere.\r\n",
}


@pytest.mark.parametrize("shape", list(ODD_SHAPES))
def test_the_halves_build_the_serial_tree_of_odd_shapes(shape: str) -> None:
    text = ODD_SHAPES[shape]
    assert encoded(build_tree(text, META, halves=True)) == encoded(build_tree(text, META, halves=False))


# A footnote cited by table rows on both sides of the split: its unit is renamed after the sections' units
# (and their analysis) were built.
CITED_FOOTNOTES = (
    "# Platforms\n\n| Platform | Built |\n|---|---|\n"
    + "".join(f"| arm{i} | yes[^{i % 3 + 1}] |\n" for i in range(3000))
    + "".join(f"\n[^{k}]: Binaries produced on these systems ({k}) are tested.\n" for k in (1, 2, 3))
)


@pytest.mark.parametrize("text", [CITED_FOOTNOTES, ODD_SHAPES["a heading per sentence"]])
@pytest.mark.parametrize("halved", [False, True])
def test_the_analysed_tree_is_the_tree_and_each_units_analysis(text: str, halved: bool) -> None:
    """assemble.build_analysed_tree analyses each section's units in the job that builds them (in the
    child, for the second half): the same units as build_tree, and analysis[i] == analyse_unit(units[i]),
    the renamed footnotes' included."""
    units, analysis = build_analysed_tree(text, META, halves=halved)
    assert encoded(units) == encoded(build_tree(text, META, halves=False))
    assert analysis == [analyse_unit(u) for u in units]
    if text is CITED_FOOTNOTES:
        notes = [u for u in units if (u.title or "").startswith("[^")]
        assert len(notes) == 3 and all("arm" in u.topic for u in notes)


class Meeting:
    """A pipe that makes both sides of a split_map work: the child's first item says so, and the parent's
    first item waits for that (else a fast parent may take every run before the child starts)."""

    def __init__(self) -> None:
        self.parent = os.getpid()
        self.read_fd, self.write_fd = os.pipe()
        self.waited = False

    def item(self) -> bool:
        """Call at the start of each item; True in the child."""
        if os.getpid() != self.parent:
            os.write(self.write_fd, b"x")
            return True
        if not self.waited:
            self.waited = True
            ready, _, _ = select.select([self.read_fd], [], [], 60)
            assert ready, "the child never started an item"
        return False


def by_pid(out: list[tuple[int, int]], parent: int) -> tuple[int, set[int]]:
    """How many results (a prefix) the parent made; the other pids (the suffix)."""
    pids = [pid for _, pid in out]
    mine = len(list(takewhile(lambda pid: pid == parent, pids)))
    return mine, set(pids[mine:])


def test_split_map_shares_the_items_with_a_child() -> None:
    """The parent takes runs from the front, the child from the back: the results are in order, the
    parent's a prefix, the child's the rest."""
    meeting = Meeting()

    def run(i: int) -> tuple[int, int]:
        meeting.item()
        time.sleep(0.001)
        return i * i, os.getpid()

    out = halves.split_map(
        range(200), [1] * 200, run, msgspec.msgpack.encode, msgspec.msgpack.decode, halves=True
    )
    assert [square for square, _ in out] == [i * i for i in range(200)]
    mine, others = by_pid(out, meeting.parent)
    assert 0 < mine < 200 and len(others) == 1 and meeting.parent not in others


def test_a_run_both_sides_took_is_used_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child that took runs the parent took as well (the two counters read at the same moment): the
    parent's results stand, the child's are used from where the parent stopped."""
    meeting = Meeting()

    def greedy(items, bounds, run, reach):  # every run, whatever the parent took
        results = [run(item) for item in items]
        reach[1] = 0  # the first run done here
        return results

    monkeypatch.setattr(halves, "_from_the_back", greedy)

    def run(i: int) -> tuple[int, int]:
        meeting.item()
        time.sleep(0.001)
        return i + 7, os.getpid()

    out = halves.split_map(
        range(100), [1] * 100, run, msgspec.msgpack.encode, msgspec.msgpack.decode, halves=True
    )
    assert [value for value, _ in out] == [i + 7 for i in range(100)]
    mine, others = by_pid(out, meeting.parent)
    assert mine > 0 and (mine == 100 or meeting.parent not in others)


@pytest.mark.parametrize("how", ["raises", "dies", "garbles"])
def test_a_failed_child_leaves_its_half_to_the_parent(how: str) -> None:
    meeting = Meeting()

    def run(i: int) -> int:
        if meeting.item():
            if how == "raises":
                raise RuntimeError("child failed")
            if how == "dies":
                os.kill(os.getpid(), signal.SIGKILL)
        return i + 100

    def decode(data: bytes) -> list:
        items = msgspec.msgpack.decode(data)
        return items[:-1] if how == "garbles" else items  # a short answer is not used

    out = halves.split_map(range(8), [3] * 8, run, msgspec.msgpack.encode, decode, halves=True)
    assert out == [i + 100 for i in range(8)]


def test_no_fork_no_halves(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> int:
        raise OSError("fork refused (process limit)")

    text = big_document()
    serial = build_tree(text, META, halves=False)
    monkeypatch.setattr(os, "fork", refuse)
    assert encoded(build_tree(text, META, halves=True)) == encoded(serial)


def test_chunk_bounds_cut_runs_of_about_equal_size() -> None:
    assert halves.chunk_bounds([10, 10, 10, 10], 2) == [0, 2, 4]
    assert halves.chunk_bounds([1] * 6, 3) == [0, 2, 4, 6]
    assert halves.chunk_bounds([100, 1, 1], 4) == [0, 1, 2, 3]  # a run is at least one item
    assert halves.chunk_bounds([5] * 3, 64) == [0, 1, 2, 3]
    assert halves.chunk_bounds([1], 4) == [0, 1]
    assert halves.chunk_bounds([], 4) == [0]


def test_the_real_process_answers_the_serial_tree() -> None:
    """The one-shot plugin process (which forks for this size) answers the units of the serial build."""
    text = big_document()
    request = {
        "prompt": "",
        "context": [],
        "op": "normalizePersistentContext",
        "payload": {"sourceId": "src-big", "sourceName": "big.md", "sourceType": "text", "text": text},
        "budget": {"deadlineMs": 120000},
    }
    proc = subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.sd_symbolic"],
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    units = parse_document(proc.stdout.decode(), "normalizePersistentContext").units
    stamp = units[0].createdAt
    serial = build_tree(text, SourceMeta("src-big", "big.md", "text", created_at=stamp), halves=False)
    assert [msgspec.structs.replace(u, ingestedAt=stamp) for u in units] == [
        msgspec.structs.replace(u, ingestedAt=stamp) for u in serial
    ]


@pytest.mark.parametrize(("halved", "how"), [(True, "ok"), (True, "raises"), (False, "ok")])
def test_meanwhile_runs_once_in_the_parent(halved: bool, how: str) -> None:
    """The parent's own extra work (assemble.py: the aggregate's summary) runs exactly once, in the parent:
    before its items when a child shares them (the child takes runs meanwhile), after them all without
    one; a failed child changes neither."""
    parent = os.getpid()
    events: list[tuple[str, int]] = []

    def run(i: int) -> int:
        if os.getpid() != parent and how == "raises":
            raise RuntimeError("child failed")
        if os.getpid() == parent:
            events.append(("item", i))
        return i * 2

    out = halves.split_map(
        range(6),
        [1] * 6,
        run,
        msgspec.msgpack.encode,
        msgspec.msgpack.decode,
        halves=halved,
        meanwhile=lambda: events.append(("meanwhile", os.getpid())),
    )
    assert out == [0, 2, 4, 6, 8, 10]
    assert [e for e in events if e[0] == "meanwhile"] == [("meanwhile", parent)]
    before = [i for kind, i in events[: events.index(("meanwhile", parent))] if kind == "item"]
    assert before == ([] if halved else list(range(6)))
