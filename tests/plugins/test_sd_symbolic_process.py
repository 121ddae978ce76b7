"""sd-symbolic through the real process: one-shot and worker mode, CNL that validates, structured errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.errors import parse_error_line
from mrpvm.protocol.framing import FrameBuffer, encode_frame

COMMAND = [sys.executable, "-m", "mrpvm.plugins.sd_symbolic"]

SOURCE = """# Ferry Timetable

The ferry is a diesel vessel that crosses the strait twice a day. The crossing takes forty minutes.
The ferry depends on the harbour crane.

To board with a bicycle:

1. Buy a bicycle ticket at the kiosk.
2. Wait in the left lane.
3. Wheel the bicycle up the rear ramp.
"""


def one_shot(request: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        COMMAND, input=json.dumps(request).encode(), capture_output=True, timeout=60, check=False
    )


def test_detect_seeds_one_shot() -> None:
    proc = one_shot(
        {
            "prompt": "Which lane do cyclists use? Also, how long is the crossing? One word only.",
            "context": [],
            "payload": {"turnId": "turn-9"},
        }
    )
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "detectSeeds")
    assert doc.result.status == "success" and doc.result.plugin == "sd-symbolic"
    assert [i.act for i in doc.intents] == ["identify", "identify"]
    assert [i.output for i in doc.intents] == ["single word", "single word"]
    assert [u.id for u in doc.units] == ["session::turn-9::unit-000"]
    assert doc.units[0].phaseScopes == ["gs-plugin"]


def test_bare_ds016_request_defaults_to_detect_seeds() -> None:
    proc = one_shot({"prompt": "Is the ferry late today?", "context": []})
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "detectSeeds")
    assert doc.intents[0].act == "evaluate" and doc.intents[0].output == "yes/no"


def test_normalize_one_shot() -> None:
    proc = one_shot(
        {
            "prompt": "",
            "context": [],
            "op": "normalizePersistentContext",
            "payload": {"text": SOURCE, "sourceId": "ferry", "sourceName": "ferry.md"},
        }
    )
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "normalizePersistentContext")
    kinds = [u.kuType for u in doc.units]
    assert kinds.count("aggregate") == 1 and kinds.count("composite") == 1
    procedure = next(u for u in doc.units if u.role == "Procedure")
    assert procedure.procedure.split("\n")[1:] == [
        "1. Buy a bicycle ticket at the kiosk.",
        "2. Wait in the left lane.",
        "3. Wheel the bicycle up the rear ramp.",
    ]
    fact = next(u for u in doc.units if u.relation == "depends_on")
    assert (fact.subject, fact.object) == ("ferry", "harbour crane")
    for unit in doc.units:
        if unit.kuType == "atomic":
            body = unit.textBody if unit.textBody is not None else unit.body
            assert " ".join(SOURCE[unit.charStart : unit.charEnd].split()) == " ".join(body.split())


def test_prompt_is_normalized_when_payload_has_no_text() -> None:
    proc = one_shot({"prompt": "The mill uses the river.", "context": [], "op": "normalizePersistentContext"})
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "normalizePersistentContext")
    assert doc.units[0].relation == "uses" and doc.units[0].sourceId.startswith("src-")


def test_blank_input_is_a_structured_invalid_input_error() -> None:
    proc = one_shot({"prompt": "   ", "context": []})
    assert proc.returncode == 2 and proc.stdout == b""
    error = parse_error_line(proc.stderr)
    assert error is not None and error.code == "EMPTY_PROMPT"
    proc = one_shot({"prompt": "", "context": [], "op": "normalizePersistentContext"})
    assert proc.returncode == 2
    error = parse_error_line(proc.stderr)
    assert error is not None and error.code == "EMPTY_SOURCE"


def test_bad_json_is_rejected() -> None:
    proc = subprocess.run(COMMAND, input=b"{not json", capture_output=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert parse_error_line(proc.stderr) is not None


def test_unsupported_op_answers_unsupported() -> None:
    proc = one_shot({"prompt": "x", "context": [], "op": "retrieve"})
    assert proc.returncode == 0
    assert parse_document(proc.stdout.decode()).result.status == "unsupported"


def test_worker_mode_serves_several_requests() -> None:
    requests = [
        {"id": "a1", "prompt": "Why does the ferry stop in winter?", "context": []},
        {
            "id": "a2",
            "prompt": "",
            "context": [],
            "op": "normalizePersistentContext",
            "payload": {"text": SOURCE, "sourceId": "ferry"},
        },
    ]
    data = b"".join(encode_frame(json.dumps(r).encode()) for r in requests)
    env = dict(os.environ, MRPVM_WORKER="1")
    proc = subprocess.run(COMMAND, input=data, capture_output=True, timeout=60, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    buffer = FrameBuffer()
    bodies = buffer.feed(proc.stdout)
    assert len(bodies) == 2
    first = parse_document(bodies[0].decode(), "detectSeeds")
    second = parse_document(bodies[1].decode(), "normalizePersistentContext")
    assert first.result.request == "a1" and first.intents[0].act == "explain"
    assert second.result.request == "a2" and any(u.kuType == "aggregate" for u in second.units)


def test_plugin_description_units_validate() -> None:
    from pathlib import Path

    import mrpvm.plugins.sd_symbolic as package

    text = (Path(package.__file__).parent / "plugin.kus.md").read_text()
    doc = parse_document(
        "## Plugin Result\nStatus: success\nPlugin: sd-symbolic\nConfidence: high\n\n" + text
    )
    assert len(doc.units) >= 2 and all(u.sourceId == "plugin-sd-symbolic" for u in doc.units)


# a fresh interpreter: seeds first, then a source; which part of the plugin each call had to load
LOADS = """
import json, sys
from mrpvm.plugins.sd_symbolic.__main__ import plugin
from mrpvm.protocol.cnl import parse_document
def source_units():
    return any(m.startswith("mrpvm.plugins.sd_symbolic.source_units") for m in sys.modules)
seeds = plugin.handle(json.dumps({"prompt": "How long is the crossing?", "context": [], "op": "detectSeeds",
                                  "payload": {"turnId": "turn-1"}}).encode())
after_seeds = source_units()
source = plugin.handle(json.dumps({"prompt": "", "context": [], "op": "normalizePersistentContext",
                                   "payload": {"sourceId": "ferry", "text": sys.stdin.read()}}).encode())
print(json.dumps({"after_seeds": after_seeds, "after_source": source_units(),
                  "intents": len(parse_document(seeds, "detectSeeds").intents),
                  "units": len(parse_document(source, "normalizePersistentContext").units)}))
"""


def test_a_worker_that_only_detects_seeds_never_loads_the_source_reader() -> None:
    """A one-turn ask whose --source units the kernel kept calls sd-symbolic for seeds only: the source
    reader (source_units) is loaded at the first source, not at the worker's start."""
    done = subprocess.run(
        [sys.executable, "-c", LOADS], input=SOURCE, capture_output=True, text=True, timeout=60, check=True
    )
    loads = json.loads(done.stdout.splitlines()[-1])
    assert loads["after_seeds"] is False and loads["after_source"] is True
    assert loads["intents"] >= 1 and loads["units"] >= 5
