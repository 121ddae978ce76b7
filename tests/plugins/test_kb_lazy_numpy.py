"""A lexical kb worker (kb-fast, kb-thinkingdb) never loads numpy for a source or a small set of inline
units: an ingest's kb workers, which only index sources (`onSourceText`), and a one-turn `mrpvm ask
--source` whose retrieves carry the file's units (kb_common/memindex.py: a small inline index is plain
Python) start and answer without it (~0.13 s of CPU each); the same worker still ranks the session units."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SUPPORT = Path(__file__).resolve().parents[1] / "support"

# a fresh interpreter: the worker module as a worker imports it, an upsert, then a retrieve with session units
CODE = """
import json, sys
sys.path.insert(0, sys.argv[2])
from kb_corpus import BAKING, intent, retrieve_request, selected, source_request, tree, unit
from mrpvm.plugins.{module}.__main__ import plugin
from mrpvm.protocol.envelope import encode_request

art = sys.argv[1]
seen = {{"import": "numpy" in sys.modules}}
doc, failure, _ = plugin.run(encode_request(source_request("baking", tree("baking", BAKING), art)))
assert doc is not None and doc.result.status == "success", failure
seen["source"] = "numpy" in sys.modules
ask = [intent(1, "implement", "How do I feed a sourdough starter?")]
session = [unit("session::t1::unit-000", "Procedure", "feeding",
                "Feed the sourdough starter with equal weights of flour and water every day.")]
doc, failure, _ = plugin.run(encode_request(retrieve_request(ask, session, art)))
assert doc is not None, failure
seen["session"] = "numpy" in sys.modules
seen["selected"] = selected(doc)
print(json.dumps(seen))
"""


@pytest.mark.parametrize("module", ["kb_fast", "kb_thinkingdb"])
def test_a_lexical_kb_worker_never_loads_numpy_for_sources_and_session_units(tmp_path, module):
    done = subprocess.run(
        [sys.executable, "-c", CODE.format(module=module), str(tmp_path / module), str(SUPPORT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["import"] is False and seen["source"] is False
    assert seen["session"] is False  # the session units went through the (plain) inline index
    assert "session::t1::unit-000" in seen["selected"]
