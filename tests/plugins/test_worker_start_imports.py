"""What a plugin worker's start leaves out: the planner's and sd-symbolic's modules, as their workers import them,
do not load pathlib (with urllib.parse and ipaddress, ~3 ms of each start; sdk/text.py names a file's title
without it) nor dataclasses (with inspect, ast, dis, tokenize: sd-symbolic's turn records are msgspec Structs); gs-symbolic
loads no dataclasses either (its records are Structs too: its 17 dataclasses with that import were ~80 M
instructions, a quarter of its start); no worker of a cold ask loads hashlib (OpenSSL's libcrypto: protocol/digests.py), gs-symbolic
not json (read only when the model is built); a one-turn `mrpvm ask` whose `--source` units are kept does not
load the chunker (knowledge/normalize.py imports it when it normalizes)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = """
import sys
import {module}
seen = sorted(m for m in ("pathlib", "urllib.parse", "hashlib", "_hashlib", "json", "dataclasses", "inspect",
                          "mrpvm.knowledge.chunking", "mrpvm.knowledge.ku_tree") if m in sys.modules)
print(" ".join(seen))
"""


def loaded(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CODE.format(module=module)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1].split() if done.stdout.strip() else []


@pytest.mark.parametrize(
    "module", ["mrpvm.plugins.planner_default.__main__", "mrpvm.plugins.sd_symbolic.__main__"]
)
def test_these_workers_start_without_pathlib(module):
    assert loaded(module) == []


@pytest.mark.parametrize(
    ("module", "left"),
    [
        ("mrpvm.plugins.gs_symbolic.__main__", {"pathlib", "urllib.parse"}),
        ("mrpvm.plugins.kb_balanced.__main__", {"pathlib", "urllib.parse", "json", "inspect"}),
    ],
)
def test_the_vector_workers_start_without_hashlib(module, left):
    assert set(loaded(module)) == left


def test_kept_source_units_do_not_load_the_chunker():
    assert "mrpvm.knowledge.chunking" not in loaded("mrpvm.knowledge.kept_units")
    assert "mrpvm.knowledge.ku_tree" not in loaded("mrpvm.knowledge.ingest")


def test_kb_fast_starts_without_its_store():
    """kb_common's store (SQLite, pathlib) loads when a retrieve has a store to read, not at the start: a
    worker answering from a session's inline units alone never needs it."""
    code = CODE.replace(
        '"mrpvm.knowledge.ku_tree")', '"mrpvm.knowledge.ku_tree", "sqlite3", "mrpvm.plugins.kb_common.store")'
    )
    done = subprocess.run(
        [sys.executable, "-c", code.format(module="mrpvm.plugins.kb_fast.__main__")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == []


def test_a_store_is_known_by_its_file_or_as_open(tmp_path):
    from mrpvm.plugins.kb_common.store_files import STATE_KEY, UNITS_FILE, store_known

    assert not store_known({}, tmp_path)
    assert store_known({STATE_KEY: {str(tmp_path): object()}}, str(tmp_path))  # open in this process
    (tmp_path / UNITS_FILE).write_bytes(b"")
    assert store_known({}, str(tmp_path)) and store_known({}, tmp_path)
