"""What a new user meets first: `--version`, folders for `ingest`, sessions found again, human answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import cli_env, mrpvm
from mrpvm.kernel.records import SESSION_TITLE_CHARS, title_from_question
from mrpvm.shells.cli.common import CliError
from mrpvm.shells.cli.progress import JobProgress
from mrpvm.shells.cli.source_files import select_sources
from rich.console import Console

GUIDE = "# Guide\n\n## Cleaning\n\nDelete the cache folder to clean a broken cache.\n"
BIRDS = "# Birds\n\nThe zorblax is a small bird. The zorblax lives in Norway.\n"


def test_version_prints_the_package_version():
    proc = mrpvm(cli_env(Path("/nonexistent")), "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().startswith("mrpvm 0.") and not proc.stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "guide").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "drafts").mkdir()
    (root / "README.md").write_text(GUIDE)
    (root / "guide" / "README.md").write_text(BIRDS)
    (root / "guide" / "notes.txt").write_text("plain notes\n")
    (root / "drafts" / "wip.md").write_text("# WIP\n\nnot yet\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".env").write_text("TOKEN=x\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    return root


def test_a_folder_is_read_recursively_without_hidden_or_binary_files(folder):
    selection = select_sources([folder], [], [])
    names = [f.name for f in selection.files]
    assert names == ["README.md", "drafts/wip.md", "guide/README.md", "guide/notes.txt"]
    assert selection.skipped_hidden == 2  # .git/ and .env
    assert sorted(selection.skipped_binary) == ["latin1.txt", "logo.png"]
    assert "2 hidden" in selection.summary() and "2 not text" in selection.summary()


def test_include_and_exclude_globs_match_names_or_paths(folder):
    only_md = select_sources([folder], ["*.md"], ["drafts/**"])
    assert [f.name for f in only_md.files] == ["README.md", "guide/README.md"]
    assert only_md.skipped_by_glob == 4  # wip.md, notes.txt, logo.png, latin1.txt
    by_path = select_sources([folder], ["guide/*"], [])
    assert [f.name for f in by_path.files] == ["guide/README.md", "guide/notes.txt"]
    with pytest.raises(CliError, match="no text files to ingest"):
        select_sources([folder], ["*.rst"], [])


def test_an_explicit_file_keeps_its_name_and_names_must_not_collide(folder, tmp_path):
    other = tmp_path / "README.md"
    other.write_text(GUIDE)
    with pytest.raises(CliError, match="both be named 'README.md'"):
        select_sources([folder, other], [], [])
    assert [f.name for f in select_sources([other], [], []).files] == ["README.md"]
    with pytest.raises(CliError, match="not found"):
        select_sources([tmp_path / "missing"], [], [])


def test_the_job_progress_counts_every_file_of_the_job():
    job = JobProgress(2, 300, out=Console(file=open("/dev/null", "w")), enabled=False)  # noqa: SIM115
    with job:
        on_progress, on_units = job.file_callbacks("a.md")
        on_progress(50, 100)
        on_units(7)
        assert job.units == 7
        job.file_done(100, 8)
        job.file_callbacks("b.md")[1](3)
        assert job.units == 11
        job.phase("b.md", "indexing 4 units (kb-balanced)")
        shown = job.phase_text()
        assert shown.startswith("indexing 4 units (kb-balanced) ") and shown.endswith("s"), shown
        assert job.phase_text(short=True).startswith("indexing… ")
        job.file_done(200, 4)
        assert job.phase_text() == ""  # the step ends with its file
    task = job.progress.tasks[0]
    assert job.units == 12 and task.completed == 300 and task.fields["files"] == "2/2"


def test_session_titles_come_from_the_first_question():
    assert title_from_question("  How do I\nclean a cache? ") == "How do I clean a cache?"
    long = "word " * 40
    title = title_from_question(long)
    assert len(title) <= SESSION_TITLE_CHARS and title.endswith("…") and " " not in title[-2:]


def test_folder_ingest_then_ask_continue_and_session_list(folder, tmp_path):
    env = cli_env(tmp_path / "home")
    ingested = mrpvm(env, "ingest", str(folder), "--kb", "docs", "--exclude", "drafts/**", timeout=180)
    assert ingested.returncode == 0, ingested.stderr
    out = ingested.stdout.decode()
    assert "ingested guide/README.md" in out and "3 files: 3 ingested" in out
    assert "skipped 2 hidden; 2 not text" in ingested.stderr.decode()

    first = mrpvm(env, "ask", "--kb", "docs", "How do I clean a broken cache?", timeout=180)
    assert first.returncode == 0, first.stderr
    text = first.stdout.decode()
    assert "Delete the cache folder" in text
    assert text.rstrip().endswith("- README.md › Cleaning") and "\nSources:\n" in text
    for internal in ("::chunk-", "KB Context", "**Act:**", "Intent:", "Warning"):
        assert internal not in text
    assert not first.stderr.strip()  # a successful answer: nothing on stderr

    again = mrpvm(env, "ask", "-c", "--verbose", "Where does the zorblax live?", timeout=180)
    assert again.returncode == 0, again.stderr
    verbose = again.stdout.decode()
    assert "Norway" in verbose and "::chunk-" in verbose and "### Sources Used" in verbose
    assert " · session " in again.stderr.decode()

    listed = json.loads(mrpvm(env, "session", "list", "--json").stdout)["sessions"]
    assert len(listed) == 1  # -c continued the session the first question opened
    [row] = listed
    assert row["title"] == "How do I clean a broken cache?" and row["turns"] == 2 and row["kbName"] == "docs"
    table = mrpvm(env, "session", "list").stdout.decode()
    assert "How do I clean a broken cache?" in table and "last used" in table

    renamed = mrpvm(env, "session", "set", row["id"], "--title", "Cache  questions")
    assert renamed.returncode == 0, renamed.stderr
    third = mrpvm(env, "ask", "--session", row["id"], "What is the zorblax?", timeout=180)
    assert third.returncode == 0, third.stderr
    [row] = json.loads(mrpvm(env, "session", "list", "--json").stdout)["sessions"]
    assert row["title"] == "Cache questions" and row["turns"] == 3  # a title set by hand is kept

    both = mrpvm(env, "ask", "-c", "--session", row["id"], "hi")
    assert both.returncode == 2 and "not both" in both.stderr.decode()


def test_continue_with_no_session_is_a_clear_error(tmp_path):
    proc = mrpvm(cli_env(tmp_path / "home"), "ask", "-c", "anything")
    assert proc.returncode == 2 and "no session to continue" in proc.stderr.decode()


def test_kb_export_reports_on_stdout_and_import_onto_a_taken_name_says_use_kb(tmp_path):
    env = cli_env(tmp_path / "home")
    doc = tmp_path / "guide.md"
    doc.write_text(GUIDE)
    assert mrpvm(env, "ingest", str(doc), "--kb", "a", timeout=180).returncode == 0
    archive = tmp_path / "a.zip"
    exported = mrpvm(env, "kb", "export", "a", str(archive), timeout=120)
    assert exported.returncode == 0 and not exported.stderr.strip()
    assert exported.stdout.decode().startswith("exported KB 'a' to ")
    taken = mrpvm(env, "kb", "import", str(archive), timeout=120)
    assert taken.returncode == 2
    line = taken.stderr.decode().strip()
    assert "KB_EXISTS" in line and "--kb NEW_NAME" in line and "mrpvm kb rm a" in line
    again = mrpvm(env, "kb", "import", str(archive), "--kb", "b", timeout=180)
    assert again.returncode == 0 and "imported KB 'b'" in again.stdout.decode()
