"""The console script's end (shells/cli/main.py `exit_now`): a command's output and exit status and the
atexit handlers survive skipping the interpreter's teardown; a thread still running keeps the normal exit
(the interpreter joins it); `main(argv)` called in-process returns instead of ending the caller."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_support import cli_env
from mrpvm.kernel.config import PROJECT_ROOT


def _python(code: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=cli_env(home), cwd=PROJECT_ROOT, timeout=60
    )


def test_output_status_and_atexit_handlers_survive(tmp_path: Path):
    marker = tmp_path / "atexit.txt"
    code = (
        "import atexit, sys\n"
        "from mrpvm.shells.cli.main import exit_now\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
        "sys.stdout.write('x' * 100000)\n"  # buffered: a pipe is no terminal
        "sys.stderr.write('said\\n')\n"
        "exit_now(3)\n"
        "print('not reached')\n"
    )
    proc = _python(code, tmp_path)
    assert proc.returncode == 3
    assert proc.stdout == b"x" * 100000
    assert proc.stderr == b"said\n"
    assert marker.read_text() == "ran"


def test_a_running_thread_keeps_the_normal_exit(tmp_path: Path):
    marker = tmp_path / "thread.txt"
    code = (
        "import sys, threading, time\n"
        "from mrpvm.shells.cli.main import exit_now\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        f"    open({str(marker)!r}, 'w').write('done')\n"
        "threading.Thread(target=late).start()\n"
        "exit_now(4)\n"
        "print('returned')\n"
        "sys.exit(4)\n"
    )
    proc = _python(code, tmp_path)
    assert proc.returncode == 4
    assert proc.stdout == b"returned\n"
    assert marker.read_text() == "done"  # joined by the interpreter's shutdown


def test_the_console_script_exits_with_the_commands_status(tmp_path: Path):
    code = "import sys; from mrpvm.shells.cli.main import main; sys.exit(main())"
    ok = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, env=cli_env(tmp_path), timeout=60
    )
    assert ok.returncode == 0 and b"ask" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-c", code, "kb", "show", "no-such-kb"],
        capture_output=True,
        env=cli_env(tmp_path),
        timeout=60,
    )
    assert bad.returncode != 0 and bad.stderr.strip()


def test_main_with_arguments_returns_to_its_caller(tmp_path: Path):
    code = (
        "import sys\nfrom mrpvm.shells.cli.main import main\ncode = main(['--help'])\nprint('back', code)\n"
    )
    proc = _python(code, tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.decode().rstrip().endswith("back 0")
