"""sd-symbolic builds a large source's tree on two cores (source_units/halves.py): the units are exactly
the serial build's, whichever way the second half ran (a forked child, or the parent after the child
failed, died or could not start)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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


def test_split_map_runs_the_second_half_in_a_child() -> None:
    parent = os.getpid()
    sizes = [1, 1, 1, 1, 1, 1]
    out = halves.split_map(
        range(6),
        sizes,
        lambda i: (i * i, os.getpid()),
        msgspec.msgpack.encode,
        msgspec.msgpack.decode,
        halves=True,
    )
    assert [square for square, _ in out] == [0, 1, 4, 9, 16, 25]
    pids = [pid for _, pid in out]
    assert pids[:3] == [parent] * 3 and len(set(pids[3:])) == 1 and pids[3] != parent


@pytest.mark.parametrize("how", ["raises", "dies", "garbles"])
def test_a_failed_child_leaves_its_half_to_the_parent(how: str) -> None:
    parent = os.getpid()

    def run(i: int) -> int:
        if os.getpid() != parent:
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


def test_split_point_halves_the_size() -> None:
    assert halves.split_point([10, 10, 10, 10]) == 2
    assert halves.split_point([100, 1, 1]) == 1
    assert halves.split_point([1]) == 1
    assert halves.split_point([]) == 0


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
def test_meanwhile_runs_once_in_the_parent_after_its_half(halved: bool, how: str) -> None:
    """The parent's own extra work (assemble.py: the aggregate's summary) runs exactly once, in the parent,
    after the parent's items and before the result; a failed child changes neither."""
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
    cut = halves.split_point([1] * 6, halves.PARENT_SHARE) if halved else 6
    assert before == list(range(cut))  # the parent's half is done first, the child's half is not waited for
