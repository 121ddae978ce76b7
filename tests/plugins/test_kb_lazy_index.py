"""A kb worker loads tantivy (kb_common/text_index.py) only when it opens a KB's full-text index: a retrieve
over session units alone (a one-question `mrpvm ask --source FILE` on a KB with no sources) never imports it,
and the same worker still indexes and finds a source's units once one is sent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SUPPORT = Path(__file__).resolve().parents[1] / "support"

# a fresh interpreter: the worker module as a worker imports it, then two calls in one process
CODE = """
import json, sys
sys.path.insert(0, sys.argv[2])
from kb_corpus import BAKING, intent, retrieve_request, selected, source_request, tree, unit
from mrpvm.plugins.{module}.__main__ import plugin
from mrpvm.protocol.envelope import encode_request

art = sys.argv[1]
ask = [intent(1, "implement", "How do I feed a sourdough starter?")]
session = [unit("session::t1::unit-000", "Procedure", "feeding",
                "Feed the sourdough starter with equal weights of flour and water every day.")]
seen = {{"import": "tantivy" in sys.modules}}
doc, failure, _ = plugin.run(encode_request(retrieve_request(ask, session, art)))
assert doc is not None, failure
seen["session"] = "tantivy" in sys.modules
seen["session_selected"] = selected(doc)
doc, failure, _ = plugin.run(encode_request(source_request("baking", tree("baking", BAKING), art)))
assert doc is not None and doc.result.status == "success", failure
doc, failure, _ = plugin.run(encode_request(retrieve_request(ask, [], art)))
assert doc is not None, failure
seen["source"] = "tantivy" in sys.modules
seen["source_selected"] = selected(doc)
print(json.dumps(seen))
"""


def _calls(module: str, artifacts: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CODE.format(module=module), str(artifacts), str(SUPPORT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_kb_balanced_loads_tantivy_only_for_a_kb_index(tmp_path):
    seen = _calls("kb_balanced", tmp_path / "kb-balanced")
    assert seen["import"] is False and seen["session"] is False
    assert seen["session_selected"] == ["session::t1::unit-000"]
    assert seen["source"] is True  # the source's units went through the index
    assert seen["source_selected"] and all(i.startswith("baking::") for i in seen["source_selected"])


def test_kb_fast_loads_tantivy_only_for_a_kb_index(tmp_path):
    seen = _calls("kb_fast", tmp_path / "kb-fast")
    assert seen["import"] is False and seen["session"] is False
    assert seen["source"] is True
    assert seen["source_selected"] and all(i.startswith("baking::") for i in seen["source_selected"])
