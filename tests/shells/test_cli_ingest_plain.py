"""`mrpvm ingest` with no bar to draw (--json, or stderr no terminal) keeps its counts and prints its lines
without loading rich (session 29: ~0.07 s of CPU on the path to the sd call); a terminal still gets the bar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import PROJECT_ROOT, cli_env
from mrpvm.shells.cli import ingest as ingest_cli
from mrpvm.shells.cli.job_counts import JobCounts, bar_possible

DOC = "# Kettles\n\nThe brass kettle whistles at boiling. Descale the kettle every month.\n"

# runs the CLI in-process (main(argv) returns) and reports whether rich was loaded
PROBE = """
import sys
from mrpvm.shells.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("RICH" if any(m == "rich" or m.startswith("rich.") for m in sys.modules) else "NO-RICH", code)
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    doc = tmp_path / "kettles.md"
    doc.write_text(DOC)
    env = cli_env(tmp_path / "home") | {"MRPVM_ENABLED_PLUGINS": "sd-symbolic,kb-fast"}
    env.pop("FORCE_COLOR", None)
    env.pop("TTY_COMPATIBLE", None)
    return subprocess.run(
        [sys.executable, "-c", PROBE, "ingest", "--kb", "notes", *args, str(doc)],
        capture_output=True,
        env=env,
        timeout=120,
        cwd=PROJECT_ROOT,
    )


def test_json_ingest_never_loads_rich(tmp_path: Path) -> None:
    proc = _run(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    body, _, last = out.rstrip().rpartition("\n")
    assert last == "NO-RICH 0"
    record = json.loads(body)
    assert record["failed"] == 0 and record["sources"][0]["units"] > 0


def test_piped_ingest_prints_its_lines_without_rich(tmp_path: Path) -> None:
    proc = _run(tmp_path)  # stdout and stderr are pipes: no terminal
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert lines[-1] == "NO-RICH 0"
    assert lines[0] == "created KB 'notes' (" + lines[0].split("(", 1)[1]
    assert lines[1].startswith("ingested kettles.md into KB 'notes': ") and "units/s)" in lines[1]


def test_a_terminal_gets_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert bar_possible()
    job = ingest_cli._job(1, 10, as_json=False)
    assert type(job).__name__ == "JobProgress"
    assert type(ingest_cli._job(1, 10, as_json=True)) is JobCounts
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert type(ingest_cli._job(1, 10, as_json=False)) is JobCounts
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert type(ingest_cli._job(1, 10, as_json=False)).__name__ == "JobProgress"


def test_counts_without_a_bar() -> None:
    job = JobCounts(2, 300)
    with job as same:
        assert same is job
        on_progress, on_units = job.file_callbacks("a.md")
        on_progress(50, 100)
        on_units(7)
        assert job.units == 7
        job.phase("a.md", "indexing 7 units")
        assert job.phase_text().startswith("indexing 7 units ") and job.phase_text(short=True).startswith(
            "indexing… "
        )
        job.file_done(100, 7)
        assert job.units == 7 and job.phase_text() == ""
        job.file_callbacks("b.md")[1](5)
        assert job.units == 12 and job.rate() > 0
