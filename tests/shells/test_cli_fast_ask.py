"""`mrpvm ask`'s thin daemon path (shells/cli/fast_ask.py, daemon_client.py, daemon_file.py): arguments it
does not fully understand go to the full CLI; a daemon's answer is printed as the full CLI prints it, with
the same exit status, by a process that loads neither the CLI framework nor the kernel; bad daemon files and
bad replies are never taken for a daemon's answer.

The daemon here is a stand-in HTTP server answering as `mrpvm serve` does (its real counterpart is
exercised by test_cli_ask_daemon.py); replies come with Content-Length or chunked, as uvicorn sends them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_support import cli_env
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER
from mrpvm.shells.cli import daemon_client, daemon_file, fast_ask
from mrpvm.shells.cli.answer_text import REFUSED_EXIT

TURN = {
    "request_id": "req_1",
    "session_id": "ses_1",
    "status": "success",
    "duration_ms": 12.4,
    "llm_calls": 0,
    "answer_markdown": "Builds run `tessel build --changed`.",
    "response_markdown": "## 1. Full response\n\nBuilds run `tessel build --changed`.",
    "response_document": {"groups": [{"answerMarkdown": "Builds run `tessel build --changed`."}]},
}


class _Daemon(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, dict]] = []
    mode = "length"
    knows_sources = True  # False: a daemon that predates the chat body's `sources` (ignores the field)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((self.path, body))
        if self.mode == "garbage":
            self.wfile.write(b"SSH-2.0-OpenSSH\r\n\r\n")
            self.close_connection = True
            return
        if self.path == "/sessions":
            reply, code = {"session_id": "ses_new"}, 200
        elif self.path.endswith("/context"):
            reply, code = {"warnings": ["a warning"]}, 200
        elif body.get("session_id") == "ses_nope":
            reply, code = {"code": "NOT_FOUND", "message": "no session 'ses_nope'"}, 404
        elif "sources" in body and self.knows_sources:
            reply, code = {**TURN, "context_warnings": ["a warning"]}, 200
        elif "France" in body["message"]:
            no = {"answerMarkdown": NO_CONTEXT_ANSWER}
            reply, code = (
                {**TURN, "answer_markdown": NO_CONTEXT_ANSWER, "response_document": {"groups": [no]}},
                200,
            )
        else:
            reply, code = TURN, 200
        data = json.dumps(reply).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        if self.mode == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(data), 7):
                piece = data[start : start + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def daemon(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Daemon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    address = daemon_file.DaemonAddress(pid=os.getpid(), host="127.0.0.1", port=server.server_address[1])
    daemon_file.advertise(home, address)
    _Daemon.seen, _Daemon.mode, _Daemon.knows_sources = [], "length", True
    try:
        yield home
    finally:
        server.shutdown()
        server.server_close()


def _ask(home: Path, *args: str, plugins: bool = False) -> subprocess.CompletedProcess:
    code = "import sys; from mrpvm.shells.cli.main import main; sys.exit(main())"
    env = cli_env(home) if plugins else {**cli_env(home), "MRPVM_ENABLED_PLUGINS": ""}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, "ask", *args],
        capture_output=True,
        env=env,
        cwd=PROJECT_ROOT,
        timeout=120,
    )


def _errors(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.decode().splitlines() if not line.startswith("import time:")]


def _imported(proc: subprocess.CompletedProcess) -> set[str]:
    lines = proc.stderr.decode().splitlines()
    return {
        line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:") and "|" in line
    }


@pytest.mark.parametrize("mode", ["length", "chunked"])
def test_a_daemon_answer_is_printed_without_loading_the_cli_framework(
    daemon: Path, tmp_path: Path, mode: str
):
    _Daemon.mode = mode
    source = tmp_path / "notes.md"
    source.write_text("\ufeffTessel builds with `tessel build`.\n")
    proc = _ask(daemon, "--verbose", "--kb", "tessel", "--source", str(source), "How do I build?")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.decode() == TURN["response_markdown"] + "\n"
    err = proc.stderr.decode()
    assert "[success] request req_1 · session ses_1 · 12 ms · 0 LLM calls · daemon http://127.0.0.1:" in err
    assert "mrpvm: warning: a warning" in err
    loaded = _imported(proc)
    assert "mrpvm.shells.cli.fast_ask" in loaded
    assert not {
        m for m in loaded if m.split(".")[0] in ("typer", "click", "rich", "msgspec", "http", "numpy")
    }
    assert not {
        m for m in loaded if m.startswith(("mrpvm.kernel.engine", "mrpvm.kernel.config", "mrpvm.knowledge"))
    }
    # nor the standard library's helpers the path does without (daemon_file.py, gc_pause.py, main.py)
    assert not loaded & {"pathlib", "typing", "threading", "encodings.idna", "importlib"}
    # one request: the daemon loads the source into a new session before the turn
    assert _Daemon.seen == [
        (
            "/chat/completions",
            {
                "message": "How do I build?",
                "stream": False,
                "kb": "tessel",
                "sources": [{"source_name": "notes.md", "text": "Tessel builds with `tessel build`.\n"}],
            },
        )
    ]


def test_a_daemon_that_predates_sources_gets_them_request_by_request(daemon: Path, tmp_path: Path):
    _Daemon.knows_sources = False  # it answers the one request without the source (no context_warnings)
    source = tmp_path / "notes.md"
    source.write_text("Tessel builds with `tessel build`.\n")
    proc = _ask(daemon, "--verbose", "--kb", "tessel", "--source", str(source), "How do I build?")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.decode() == TURN["response_markdown"] + "\n"
    assert "mrpvm: warning: a warning" in proc.stderr.decode()
    paths = [p for p, _ in _Daemon.seen]
    assert paths == ["/chat/completions", "/sessions", "/sessions/ses_new/context", "/chat/completions"]
    assert _Daemon.seen[2][1] == {"text": "Tessel builds with `tessel build`.\n", "source_name": "notes.md"}
    assert _Daemon.seen[3][1] == {
        "message": "How do I build?",
        "session_id": "ses_new",
        "stream": False,
        "kb": "tessel",
    }


def test_a_refusal_and_a_daemon_error_keep_the_full_clis_exit_status(daemon: Path):
    refused = _ask(daemon, "What is the capital of France?")
    assert refused.returncode == REFUSED_EXIT and refused.stdout.decode().strip() == NO_CONTEXT_ANSWER
    unknown = _ask(daemon, "--session", "ses_nope", "Why?")
    assert unknown.returncode == 2
    assert _errors(unknown) == ["mrpvm: error: no session 'ses_nope'"]


def test_a_turn_no_daemon_takes_runs_in_process_without_the_cli_framework(tmp_path: Path):
    """No daemon on the home (or --no-daemon): the thin path runs the turn in this process, printing what the
    full CLI prints with the same exit status, without importing typer, click or rich; a kernel error of
    the turn is one line, as the full CLI says it."""
    source = PROJECT_ROOT / "examples" / "tessel-build.md"
    runs = {}
    for name, home, extra in [
        ("thin", tmp_path / "a", ["--no-daemon"]),
        ("thin, no daemon file", tmp_path / "b", []),
        ("full", tmp_path / "c", ["--daemon", "--no-daemon"]),  # both: left to the full CLI (the last wins)
    ]:
        home.mkdir()
        asked = _ask(home, *extra, "--source", str(source), "How do I build tessel?", plugins=True)
        refused = _ask(home, *extra, "What is the capital of France?", plugins=True)
        unknown = _ask(home, *extra, "--session", "ses_nope", "Why?", plugins=True)
        runs[name] = (asked, refused, unknown)
    for asked, refused, unknown in runs.values():
        assert asked.returncode == 0, asked.stderr[-2000:]
        assert "tessel build --changed" in asked.stdout.decode()
        assert refused.returncode == REFUSED_EXIT and "not contain enough evidence" in refused.stdout.decode()
        assert unknown.returncode == 2 and _errors(unknown) == [
            "mrpvm: error: SESSION_NOT_FOUND: no session 'ses_nope'"
        ]
    assert len({asked.stdout for asked, _, _ in runs.values()}) == 1
    assert len({refused.stdout for _, refused, _ in runs.values()}) == 1
    for name in ("thin", "thin, no daemon file"):
        loaded = _imported(runs[name][0])
        assert "mrpvm.shells.cli.ask_turn" in loaded
        assert not {m for m in loaded if m.split(".")[0] in ("typer", "click", "rich")}
    assert "typer" in _imported(runs["full"][0])


def test_a_reply_that_is_not_http_is_not_an_answer(daemon: Path):
    _Daemon.mode = "garbage"
    reply, via = daemon_client.ask_daemon(daemon, "Why?", sources=[], session_id=None, turn_fields={})
    assert reply is None and via == ""


@pytest.mark.parametrize(
    "args",
    [
        ["Why?", "--continue"],
        ["-c", "Why?"],
        ["--local-llm", "Why?"],
        ["--no-daemon", "--daemon", "Why?"],
        ["--no-daemon", "--no-daemon", "Why?"],
        ["--retrieval-profile", "fast", "Why?"],
        ["--help"],
        ["-vc", "Why?"],
        ["--json=yes", "Why?"],
        ["Why?", "--kb"],
        ["Why?", "And how?"],
        ["   "],
        [],
        ["--max-llm-calls", "-1", "Why?"],
        ["--max-llm-calls", "two", "Why?"],
        ["--deliberation-level", "99", "Why?"],
        ["--kb", "a", "--kb", "b", "Why?"],
    ],
)
def test_arguments_the_thin_path_does_not_fully_read_go_to_the_full_cli(args: list[str]):
    assert fast_ask.parse(args) is None


def test_the_thin_path_reads_what_the_full_cli_reads():
    parsed = fast_ask.parse(
        [
            "--kb=docs",
            "-v",
            "--source",
            "a.md",
            "--source=b.md",
            "--max-llm-calls",
            "0",
            "--json",
            "--",
            "-x?",
        ]
    )
    assert parsed is not None
    assert parsed["question"] == "-x?" and parsed["kb"] == "docs" and parsed["max_llm_calls"] == 0
    assert parsed["sources"] == ["a.md", "b.md"] and parsed["verbose"] and parsed["json"]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[1, 2]",
        json.dumps({"pid": True, "host": "127.0.0.1", "port": 80}),
        json.dumps({"pid": 1, "host": "127.0.0.1", "port": 0}),
        json.dumps({"pid": 1, "host": "127.0.0.1", "port": 70000}),
        json.dumps({"pid": 1, "port": 80}),
        json.dumps({"pid": 1, "host": "127.0.0.1", "port": 80, "token": "yes"}),
        json.dumps({"pid": 1, "host": "192.168.1.5", "port": 80}),
    ],
)
def test_a_damaged_or_foreign_daemon_file_is_ignored(tmp_path: Path, content: str):
    (tmp_path / "daemon.json").write_text(content)
    assert daemon_file.read_address(tmp_path, check_alive=False) is None


def test_the_daemon_file_round_trips(tmp_path: Path):
    address = daemon_file.DaemonAddress(pid=os.getpid(), host="::1", port=8787, token=True)
    daemon_file.advertise(tmp_path, address)
    assert daemon_file.read_address(tmp_path) == address and address.url == "http://[::1]:8787"
    daemon_file.withdraw(tmp_path, os.getpid() + 1)  # another daemon's pid: kept
    assert daemon_file.read_address(tmp_path) == address
    daemon_file.withdraw(tmp_path, os.getpid())
    assert daemon_file.read_address(tmp_path) is None


def _processes_of_home(home: Path) -> list[int]:
    """Live processes started with this kernel home in their environment (the CLI's plugin workers)."""
    found = []
    marker = f"MRPVM_HOME={home}".encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in env and state not in ("Z", "X"):
                found.append(int(entry))
    return found


def _ended(home: Path) -> bool:
    """The CLI's workers are gone: killed with it (bwrap's --die-with-parent), their control groups removed
    by the reaper its close started (kernel/supervisor/reaper.py) within its grace; this waits for the
    kernel's teardown of the last one (a guard against a hang, never a measure)."""
    deadline = time.monotonic() + 30
    while _processes_of_home(home) and time.monotonic() < deadline:
        time.sleep(0.02)
    return _processes_of_home(home) == []


def test_a_cold_ask_that_launches_its_workers_early_answers_the_same_and_leaves_nothing_running(
    tmp_path: Path,
):
    """The second and later asks on a home launch the workers the last one started before the kernel's
    imports (kernel/supervisor/early_launch.py): the answer is the same, and no worker outlives the CLI,
    whether adopted or not (a changed question plans other plugins)."""
    source = PROJECT_ROOT / "examples" / "tessel-build.md"
    home = tmp_path / "home"
    home.mkdir()
    answers = []
    for question in ["How do I build tessel?"] * 3 + [
        "What is the capital of France?",
        "How do I build tessel?",
    ]:
        asked = _ask(home, "--no-daemon", "--source", str(source), question, plugins=True)
        assert asked.returncode in (0, REFUSED_EXIT), asked.stderr[-2000:]
        answers.append(asked.stdout)
        assert _ended(home)
    assert (home / "run" / "early-workers.json").exists()
    assert len({answers[i] for i in (0, 1, 2, 4)}) == 1 and "tessel build --changed" in answers[0].decode()
    assert "not contain enough evidence" in answers[3].decode()


# What the first worker launch may follow: nothing a turn needs later (each delays every worker's start).
LOADED_AFTER_THE_LAUNCH = (
    "typing",
    "pathlib",
    "msgspec",
    "asyncio",
    "mrpvm.kernel.store",
    "mrpvm.kernel.budgets",
)
_UNTIL_THE_KERNEL = """
import sys
from mrpvm.shells.cli.main import main

launched, loaded = [], []

def hook(event, args):
    if event == "subprocess.Popen":
        if not launched:
            loaded.extend(m for m in {watched!r} if m in sys.modules)
        launched.append(args[1][-1])
    elif event == "import" and args[0] == "mrpvm.protocol.envelope" and launched:
        print(repr((launched, sorted(loaded))))
        raise SystemExit(0)  # the kernel's imports begin: what this test looks at is over

sys.addaudithook(hook)
sys.exit(main())
"""


def test_a_one_turn_ask_launches_the_recorded_workers_first_sd_first_before_typing_pathlib_or_the_kernel(
    tmp_path: Path,
):
    """The workers the home's record names are launched in the record's order (the order of the turn's first
    calls: the sd-plugin first) before the CLI loads typing, pathlib, msgspec, asyncio or the store (nor the
    kernel's limits, which only a `--deliberation-level` needs read first)."""
    from mrpvm.kernel.supervisor import early_launch

    home = tmp_path / "home"
    home.mkdir()
    waiting = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    workers = {
        name: {"argv": [*waiting, name], "cwd": str(tmp_path), "env": {}, "processes": 64, "memory": 1 << 31}
        for name in ("sd-first", "planner-next", "kb-then", "gs-last")
    }
    early_launch.record(home, early_launch.key_of(None, None, None, None), workers)
    code = _UNTIL_THE_KERNEL.format(watched=LOADED_AFTER_THE_LAUNCH)
    out = subprocess.run(
        [sys.executable, "-c", code, "ask", "--no-daemon", "How is it built?"],
        capture_output=True,
        text=True,
        env=cli_env(home),
        cwd=PROJECT_ROOT,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    launched, loaded = eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr
    assert launched == ["sd-first", "planner-next", "kb-then", "gs-last"]
    assert loaded == []
