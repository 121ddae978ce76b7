"""What a plugin worker's start leaves out: the planner's and sd-symbolic's modules, as their workers import them,
do not load pathlib (with urllib.parse and ipaddress, ~3 ms of each start; sdk/text.py names a file's title
without it), and a one-turn `mrpvm ask` whose `--source` units are kept does not load the chunker
(knowledge/normalize.py imports it when it normalizes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CODE = """
import json, sys
import {module}
print(json.dumps(sorted(m for m in ("pathlib", "urllib.parse", "mrpvm.knowledge.chunking",
                                    "mrpvm.knowledge.ku_tree") if m in sys.modules)))
"""


def loaded(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CODE.format(module=module)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "module", ["mrpvm.plugins.planner_default.__main__", "mrpvm.plugins.sd_symbolic.__main__"]
)
def test_these_workers_start_without_pathlib(module):
    assert loaded(module) == []


def test_kept_source_units_do_not_load_the_chunker():
    assert "mrpvm.knowledge.chunking" not in loaded("mrpvm.knowledge.kept_units")
    assert "mrpvm.knowledge.ku_tree" not in loaded("mrpvm.knowledge.ingest")
