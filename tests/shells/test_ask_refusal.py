"""A refusal is honest (issue 20): `mrpvm ask` exits 3 when the documents do not answer, and the refusal
cites no sources (the units it looked at did not answer: listing them would read as an answer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER
from mrpvm.shells.cli.ask import REFUSED_EXIT

ROOT = Path(__file__).resolve().parents[2]
DOC = """# Vault

## Storage

Snapshots are written to /srv/vault/snapshots every night at two o'clock.
Old snapshots are pruned after thirty days.

## Network

The vault daemon listens on port 7400.
"""


def ask(home: Path, source: Path, question: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env["MRPVM_HOME"] = str(home)
    argv = [sys.executable, "-m", "mrpvm.shells.cli.main", "ask", "--source", str(source), question, "--json"]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def test_a_refusal_exits_3_and_lists_no_sources_while_an_answer_exits_0(tmp_path):
    source = tmp_path / "vault.md"
    source.write_text(DOC)
    refused = ask(tmp_path / "home", source, "Who pruned the old snapshots?")
    assert refused.returncode == REFUSED_EXIT == 3, refused.stderr
    group = json.loads(refused.stdout)["response_document"]["groups"][0]
    assert group["answerMarkdown"].strip() == NO_CONTEXT_ANSWER
    assert group["kbSources"] == [] and group["sessionSources"] == []
    answered = ask(tmp_path / "home", source, "Which port does the vault daemon listen on?")
    assert answered.returncode == 0, answered.stderr
    data = json.loads(answered.stdout)
    assert "7400" in data["response_document"]["groups"][0]["answerMarkdown"]
    assert data["response_document"]["groups"][0]["sessionSources"]


def test_a_refusals_status_says_no_context_as_its_text_and_exit_code_do(tmp_path):
    """The refusal's text, its exit code and its status agree: a turn refused with the no-context sentence is
    reported `no-context`, not `weak` (which the README gives a weak answer, exit 0)."""
    source = tmp_path / "vault.md"
    source.write_text(DOC)
    refused = ask(tmp_path / "home", source, "Who pruned the old snapshots?")
    assert refused.returncode == REFUSED_EXIT, refused.stderr
    data = json.loads(refused.stdout)
    assert data["response_document"]["groups"][0]["answerMarkdown"].strip() == NO_CONTEXT_ANSWER
    assert data["response_document"]["status"] == "no-context"


OPTIONS = """# Vault options

## Storage

Snapshots are written to /srv/vault/snapshots every night at two o'clock.

## Options

### --keep DAYS

How many days a snapshot is kept before it is pruned.

The default is 30.

### --port N

The port the vault daemon listens on.

The default is 7400.
"""


def test_a_follow_up_is_resolved_against_the_sessions_earlier_turn(tmp_path):
    """'What is its default?' after a turn about --keep asks for --keep's default (not --port's): the
    rewritten intent is what the turn answers, and what its response shows."""
    source = tmp_path / "vault.md"
    source.write_text(OPTIONS)
    home = tmp_path / "home"
    first = ask(home, source, "What does the --keep option do?")
    session = json.loads(first.stdout)["session_id"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env["MRPVM_HOME"] = str(home)
    argv = [
        sys.executable,
        "-m",
        "mrpvm.shells.cli.main",
        "ask",
        "--session",
        session,
        "What is its default?",
    ]
    follow = subprocess.run([*argv, "--json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert follow.returncode == 0, follow.stderr
    group = json.loads(follow.stdout)["response_document"]["groups"][0]
    assert group["intent"] == "What is the default of --keep?"
    assert "30" in group["answerMarkdown"] and "7400" not in group["answerMarkdown"]
