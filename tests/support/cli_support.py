"""Shared helpers for the CLI tests: run `mrpvm` as a real subprocess with a private MRPVM_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mrpvm.kernel.config import MANIFESTS_DIR, PROJECT_ROOT

TESTS = Path(__file__).resolve().parent
BROKEN = TESTS / "broken_plugins"
TEST_WRAPPERS = TESTS / "wrappers"
NODE_WRAPPER = PROJECT_ROOT / "wrappers" / "gs-keyword-node"
LEGACY_WRAPPER = PROJECT_ROOT / "wrappers" / "legacy-shout"
EXAMPLES = "gs-keyword-node,legacy-shout"  # the shipped example wrappers: enabled only when allowlisted
BUILTINS = sorted(p.stem for p in MANIFESTS_DIR.glob("*.json"))
SCRIPT = Path(sys.executable).with_name("mrpvm")
CLI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "mrpvm.shells.cli.main"]


def cli_env(home: Path) -> dict[str, str]:
    """The caller's environment without MRPVM_* settings, with MRPVM_HOME at `home`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    clean["MRPVM_HOME"] = str(home)
    return clean


def mrpvm(
    env: dict, *args: str, stdin: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, env=env, timeout=timeout, cwd=PROJECT_ROOT
    )


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The CLI's user errors are exactly one line on stderr, never a traceback."""
    text = proc.stderr.decode()
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def stderr_json(proc: subprocess.CompletedProcess) -> dict:
    record = json.loads(one_error_line(proc))
    assert isinstance(record["code"], str) and isinstance(record["message"], str)
    return record


def check_json(env: dict, target: str) -> tuple[int, dict]:
    """`mrpvm plugin check TARGET --json`: (exit code, report)."""
    proc = mrpvm(env, "plugin", "check", target, "--json", timeout=120)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def failed(report: dict) -> dict[str, str]:
    """Failed checks of a report: name → detail."""
    return {c["name"]: c["detail"] for c in report["checks"] if not c["passed"]}
