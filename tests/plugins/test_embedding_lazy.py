"""The sentence model is loaded only when a text must be encoded (sdk embedding/encoder.py).

A fresh `mrpvm ask --source FILE` whose intent and units were kept by an earlier ask answers without
importing onnxruntime (each of kb-balanced and gs-symbolic used to load it at its worker's start), with the
same answer and the same vectors, and gs-symbolic without importing numpy (it compares plain
vectors); a warm worker still gets the model, once idle or at its first novel text,
and its calls are never answered without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from kb_corpus import intent, retrieve_request, selected, tree
from mrpvm.plugins.sdk.embedding import available
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup
from mrpvm.protocol.envelope import encode_request

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

QUESTION = "Where does the kiln keep its saved schedules?"
UNITS = tree(
    "kiln",
    [
        (
            "Programs",
            [
                ("Description", "storage", "Firing programs are saved under /var/lib/kiln/programs."),
                ("Description", "limits", "A program holds at most twelve segments."),
            ],
        )
    ],
)

# a fresh interpreter: runs one plugin request, reports its reply and whether the runtime (and numpy) was
# imported
FRESH = """
import json, sys
from mrpvm.plugins.sdk.embedding import encoder
plugin_module, body_file = sys.argv[1], sys.argv[2]
module = __import__(plugin_module, fromlist=["plugin"])
reply = module.plugin.handle(open(body_file, "rb").read())
print(json.dumps({"reply": reply, "onnxruntime": "onnxruntime" in sys.modules,
                  "numpy": "numpy" in sys.modules,
                  "loaded": bool(encoder._shared),
                  "unneeded": sorted(m for m in ("zipfile", "importlib.metadata", "shutil") if m in sys.modules)}))
"""


def _fresh(plugin_module: str, body: bytes, tmp_path: Path) -> dict:
    path = tmp_path / f"body-{plugin_module.split('.')[-2]}.json"
    path.write_bytes(body)
    done = subprocess.run(
        [sys.executable, "-c", FRESH, plugin_module, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_kb_balanced_reads_kept_vectors_without_loading_the_model(tmp_path: Path) -> None:
    art = tmp_path / "_session" / "kb-balanced"
    art.mkdir(parents=True)
    body = encode_request(retrieve_request([intent(1, "identify", QUESTION)], units=UNITS, artifacts=art))
    first = _fresh("mrpvm.plugins.kb_balanced.__main__", body, tmp_path)
    again = _fresh("mrpvm.plugins.kb_balanced.__main__", body, tmp_path)
    assert first["loaded"] and first["onnxruntime"]  # the first ask encodes its intent and units
    assert not again["loaded"] and not again["onnxruntime"]  # the second reads every vector from the folder
    assert again["unneeded"] == []  # nor opens the model package, reads installed metadata or builds a graph
    replies = [parse_document(r["reply"], "retrieve") for r in (first, again)]
    assert selected(replies[0]) == selected(replies[1]) == ["kiln::chunk-000::unit-000"]
    assert "bm25+minilm" in first["reply"] and "bm25+minilm" in again["reply"]  # the dense view, both times
    assert first["reply"] == again["reply"]


def _solve_body(question: str, units: list, art: Path) -> bytes:
    payload = {
        "intent": msgspec.to_builtins(
            IntentGroup(index=1, act="identify", intent=question, output="free text")
        ),
        "evidence": msgspec.to_builtins([u for u in units if u.kuType == "atomic"]),
        "guidance": [],
        "allowDecompose": False,
    }
    return json.dumps(
        {
            "op": "solve",
            "prompt": question,
            "context": [],
            "payload": payload,
            "paths": {"artifacts": str(art)},
        }
    ).encode()


def test_gs_symbolic_reads_kept_vectors_without_loading_the_model(tmp_path: Path) -> None:
    art = tmp_path / "kb" / "gs-symbolic"
    art.mkdir(parents=True)
    question = "How long are snapshots kept?"
    units = tree(
        "vault", [("Storage", [("Description", "retention", "Old snapshots are pruned after thirty days.")])]
    )
    body = _solve_body(question, units, art)
    first = _fresh("mrpvm.plugins.gs_symbolic.__main__", body, tmp_path)
    again = _fresh("mrpvm.plugins.gs_symbolic.__main__", body, tmp_path)
    assert first["loaded"] and not again["loaded"] and not again["onnxruntime"]
    assert first["numpy"] and not again["numpy"]  # the model runs on numpy; kept vectors need none
    assert again["unneeded"] == []
    answers = [parse_document(r["reply"], "solve") for r in (first, again)]
    assert answers[0].answer == answers[1].answer == "Old snapshots are pruned after thirty days."
    assert "meaning" in (answers[1].result.evidence or "")  # judged by meaning from the kept vectors


def test_gs_symbolic_compares_a_how_to_verb_from_kept_vectors(tmp_path: Path) -> None:
    """A how-to question's verb is compared with the verbs of the evidence by meaning (action.py): the
    words' vectors kept by the first call spare the second one the model, with the same reply."""
    art = tmp_path / "kb" / "gs-symbolic"
    art.mkdir(parents=True)
    question = "How do I delete a virtual environment?"
    units = tree(
        "venv",
        [
            (
                "Environments",
                [
                    (
                        "Description",
                        "uninstall",
                        "Run pip uninstall to remove the packages from the virtual environment.",
                    ),
                    ("Description", "delete", "Delete the virtual environment by removing its folder."),
                ],
            )
        ],
    )
    body = _solve_body(question, units, art)
    first = _fresh("mrpvm.plugins.gs_symbolic.__main__", body, tmp_path)
    again = _fresh("mrpvm.plugins.gs_symbolic.__main__", body, tmp_path)
    assert first["loaded"]  # the first call encodes the question, the sentences and the verbs
    assert not again["loaded"] and not again["onnxruntime"]  # every vector, the verbs' too, was kept
    assert not again["numpy"]
    assert first["reply"] == again["reply"]
    answer = parse_document(again["reply"], "solve").answer or ""
    assert "removing its folder" in answer


WORKER = """
import time
from mrpvm.plugins.sdk.embedding import encoder
encoder.IDLE_LOAD_S = 0.3
encoder.for_call(1.0)  # a one-shot call with 1 s left: deferred (unchanged)
deferred = not encoder.usable()
encoder.worker_started()
encoder.for_call(1.0)  # the same deadline in a warm worker: never deferred
worker_usable = encoder.usable()
loaded_at_start = bool(encoder._shared)
for _ in range(600):
    if bool(encoder._shared):
        break
    time.sleep(0.1)
print(deferred, worker_usable, loaded_at_start, bool(encoder._shared))
"""


def test_a_warm_worker_loads_the_model_once_idle_and_is_never_deferred() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WORKER], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.split() == ["True", "True", "False", "True"]
