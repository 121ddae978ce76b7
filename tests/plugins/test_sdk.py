"""The plugin SDK through real subprocesses: one-shot exit codes and stderr JSON, worker framing and recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.errors import ErrorInfo
from mrpvm.protocol.framing import encode_frame, read_frame
from mrpvm.protocol.invalid_examples import INVALID_REQUESTS

PLUGINS = Path(__file__).resolve().parents[1] / "support" / "plugins"
PROBE = PLUGINS / "sdk_probe.py"
ECHO = PLUGINS / "echo_gs.py"
GUARD_S = 20  # a hung plugin fails the test instead of hanging the suite

CONTEXT = [
    {
        "title": "src-1::chunk-000::unit-000",
        "sourceLink": "notes.md",
        "text": "Role: Definition\nTopic: WAL\nClaim: WAL appends changes to a -wal file.",
    },
    {
        "title": "src-1::chunk-000::unit-001",
        "sourceLink": "notes.md",
        "text": "Role: Procedure\nTopic: enabling WAL\nProcedure: 1. Open the db.\n2. Run PRAGMA journal_mode=WAL;",
    },
]


def _env(worker: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    if worker:
        env["MRPVM_WORKER"] = "1"
    return env


def run_once(plugin: Path, body: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(plugin)],
        input=body,
        capture_output=True,
        env=_env(),
        cwd=plugin.parent,
        timeout=GUARD_S,
        check=False,
    )


def request(prompt: str, **extra) -> bytes:
    return json.dumps({"prompt": prompt, "context": CONTEXT, **extra}).encode()


def error_line(stderr: bytes) -> ErrorInfo:
    """The stderr must end with exactly one JSON error line; return it decoded."""
    import msgspec

    last = stderr.strip().splitlines()[-1]
    return msgspec.json.decode(last, type=ErrorInfo)


# --------------------------------------------------------------------------- one-shot


def test_one_shot_success_is_valid_cnl_for_the_main_op():
    proc = run_once(PROBE, request("what is WAL"))
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "retrieve")
    assert doc.result.status == "success"
    assert [u.id for u in doc.units] == [item["title"] for item in CONTEXT]
    assert doc.units[1].procedure == "1. Open the db.\n2. Run PRAGMA journal_mode=WAL;"
    assert doc.resolved[0].selected == [item["title"] for item in CONTEXT]
    assert proc.stderr == b""


def test_bare_ds016_example_works_with_a_gs_plugin():
    seed = {
        "prompt": "Verify that constraint X is satisfiable.",
        "context": [
            {
                "title": "sess-abc123::turn-003::unit-000",
                "sourceLink": "Current-Turn Context",
                "text": "Role: Constraint\nClaim: Variables are integers.",
            },
            {
                "title": "src-001::chunk-000::unit-000",
                "sourceLink": "rules.md",
                "text": "Role: Constraint\nClaim: a + b must equal c.",
            },
        ],
    }
    proc = run_once(ECHO, json.dumps(seed).encode())
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.sources == ["sess-abc123::turn-003::unit-000", "src-001::chunk-000::unit-000"]
    assert "Verify that constraint X" in (doc.answer or "")


@pytest.mark.parametrize(
    "name", ["malformed-json", "context-item-wrong-type", "unknown-op", "payload-field-wrong-type"]
)
def test_invalid_request_exits_2_with_one_stderr_json_line(name):
    proc = run_once(PROBE, INVALID_REQUESTS[name])
    assert proc.returncode == 2
    assert proc.stdout == b""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    info = error_line(proc.stderr)
    assert info.code == ("INVALID_JSON" if name == "malformed-json" else "SCHEMA_VIOLATION")
    assert info.message


def test_handler_exception_exits_1_with_internal_error():
    proc = run_once(PROBE, request("raise"))
    assert proc.returncode == 1
    assert proc.stdout == b""
    info = error_line(proc.stderr)
    assert info.code == "INTERNAL_ERROR"
    assert "RuntimeError: boom" in info.message


def test_plugin_failure_code_and_details_pass_through():
    proc = run_once(PROBE, request("fail LLM_UNAVAILABLE"))
    assert proc.returncode == 1
    info = error_line(proc.stderr)
    assert (info.code, info.message, info.details) == (
        "LLM_UNAVAILABLE",
        "upstream unavailable",
        {"retryAfterMs": 500},
    )


def test_invalid_input_raised_by_a_handler_exits_2():
    proc = run_once(PROBE, request("invalid"))
    assert proc.returncode == 2
    assert error_line(proc.stderr).code == "UNSUPPORTED_INPUT"


def test_handler_returning_a_non_document_is_an_internal_error():
    proc = run_once(PROBE, request("bad-return"))
    assert proc.returncode == 1
    assert error_line(proc.stderr).code == "INTERNAL_ERROR"


@pytest.mark.parametrize("prompt", ["sleep 30", "spin", "swallow"])
def test_deadline_overrun_exits_3_with_timeout(prompt):
    proc = run_once(PROBE, request(prompt, budget={"deadlineMs": 300}))
    assert proc.returncode == 3
    assert proc.stdout == b""
    info = error_line(proc.stderr)
    assert info.code == "TIMEOUT"
    assert "300 ms" in info.message


def test_unimplemented_op_of_the_type_is_unsupported_exit_0():
    proc = run_once(PROBE, request("index this", op="onSourceText"))
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "onSourceText")
    assert doc.result.status == "unsupported"
    assert "onSourceText" in doc.result.result


def test_op_of_another_type_is_unsupported():
    proc = run_once(PROBE, request("x", op="solve"))
    # `solve` is a real op, but the probe is a kb-plugin: it answers unsupported rather than crashing.
    assert proc.returncode == 0
    assert parse_document(proc.stdout.decode(), "solve").result.status == "unsupported"


def test_stray_output_from_a_handler_goes_to_stderr_not_stdout():
    proc = run_once(PROBE, request("print"))
    assert proc.returncode == 0
    doc = parse_document(proc.stdout.decode(), "retrieve")  # stdout is exactly one valid document
    assert doc.result.status == "success"
    assert b"stray print from a handler" in proc.stderr
    assert b"stray write to fd 1" in proc.stderr
    assert b"stray" not in proc.stdout


# --------------------------------------------------------------------------- worker mode


class Worker:
    """A live worker process spoken to frame by frame."""

    def __init__(self, plugin: Path = PROBE):
        self.proc = subprocess.Popen(
            [sys.executable, str(plugin)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(worker=True),
            cwd=plugin.parent,
        )

    def send(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode_frame(body))
        self.proc.stdin.flush()

    def call(self, body: bytes, op: str | None = "retrieve"):
        self.send(body)
        assert self.proc.stdout is not None
        frame = read_frame(self.proc.stdout)
        assert frame is not None, "worker closed stdout"
        return parse_document(frame.decode(), op)

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=GUARD_S)
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def worker():
    w = Worker()
    yield w
    w.kill()


def _notes(doc) -> dict[str, str]:
    return dict(part.split("=", 1) for part in doc.result.notes.split())


def test_worker_answers_each_frame_with_its_request_id_in_one_process(worker):
    docs = [worker.call(request(f"question {i}", id=rid)) for i, rid in enumerate([1, "b-2", 3, "req-4"])]
    assert [d.result.request for d in docs] == ["1", "b-2", "3", "req-4"]
    notes = [_notes(d) for d in docs]
    assert len({n["pid"] for n in notes}) == 1
    assert [n["served"] for n in notes] == ["1", "2", "3", "4"]
    assert all(d.result.status == "success" for d in docs)


def test_worker_pipelined_frames_are_answered_in_order(worker):
    for i in range(5):
        worker.send(request(f"q{i}", id=i))
    assert worker.proc.stdout is not None
    ids = [
        parse_document(read_frame(worker.proc.stdout).decode(), "retrieve").result.request for _ in range(5)
    ]
    assert ids == ["0", "1", "2", "3", "4"]


def test_worker_bad_json_frame_gets_an_error_result_and_the_worker_keeps_serving(worker):
    bad = worker.call(b'{"id": 9, "prompt": ', op=None)
    assert (bad.result.status, bad.result.code) == ("error", "INVALID_JSON")
    violation = worker.call(json.dumps({"id": "v1", "prompt": 5, "context": []}).encode(), op=None)
    assert (violation.result.status, violation.result.code, violation.result.request) == (
        "error",
        "SCHEMA_VIOLATION",
        "v1",
    )
    good = worker.call(request("still there?", id=10))
    assert (good.result.status, good.result.request) == ("success", "10")


def test_worker_handler_errors_become_error_results(worker):
    crashed = worker.call(request("raise", id=1), op=None)
    assert (crashed.result.status, crashed.result.code) == ("error", "INTERNAL_ERROR")
    failed = worker.call(request("fail QUOTA", id=2), op=None)
    assert (failed.result.code, failed.result.request) == ("QUOTA", "2")
    assert worker.call(request("fine", id=3)).result.status == "success"


def test_worker_timeout_gives_timeout_result_and_worker_lives_on(worker):
    first = worker.call(request("question", id="a"))
    late = worker.call(request("sleep 30", id="b", budget={"deadlineMs": 300}), op=None)
    assert (late.result.status, late.result.code, late.result.request) == ("error", "TIMEOUT", "b")
    after = worker.call(request("question", id="c"))
    assert after.result.status == "success"
    assert _notes(after)["pid"] == _notes(first)["pid"]
    assert _notes(after)["served"] == "3"


def test_worker_unsupported_op(worker):
    doc = worker.call(request("x", op="onSessionEvent", id=5), op="onSessionEvent")
    assert (doc.result.status, doc.result.request) == ("unsupported", "5")


def test_worker_exits_0_on_eof(worker):
    worker.call(request("one", id=1))
    code, _ = worker.close()
    assert code == 0


def test_worker_exits_0_on_immediate_eof(worker):
    code, stderr = worker.close()
    assert code == 0
    assert stderr == b""


def test_worker_unreadable_frame_header_exits_2_with_framing_error(worker):
    assert worker.proc.stdin is not None
    worker.proc.stdin.write(b"Content-Length: many\r\n\r\n{}")
    worker.proc.stdin.flush()
    code, stderr = worker.close()
    assert code == 2
    assert error_line(stderr).code == "FRAMING_ERROR"


def test_worker_mode_by_argument():
    proc = subprocess.run(
        [sys.executable, str(PROBE), "--worker"],
        input=encode_frame(request("q", id=1)) + encode_frame(request("q", id=2)),
        capture_output=True,
        env=_env(),
        cwd=PLUGINS,
        timeout=GUARD_S,
        check=False,
    )
    assert proc.returncode == 0
    from mrpvm.protocol.framing import FrameBuffer

    frames = FrameBuffer().feed(proc.stdout)
    assert [parse_document(f.decode(), "retrieve").result.request for f in frames] == ["1", "2"]


def test_plugin_start_skips_typing_extensions_yet_plugins_may_import_it():
    """msgspec is imported lean at plugin start (see plugins/__init__.py); the module stays importable."""
    code = (
        "import sys, mrpvm.plugins.sdk, msgspec\n"
        "print('typing_extensions' in sys.modules)\n"
        "import typing_extensions\n"
        "class S(msgspec.Struct):\n"
        "    x: typing_extensions.Annotated[int, msgspec.Meta(ge=0)]\n"
        "print(msgspec.json.decode(b'{\"x\": 3}', type=S).x)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=GUARD_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "3"]
