"""A new user's own man pages, as issue 20 found them: `man X > X.txt` for tar, ssh_config, curl and
git-commit in one KB, then the questions such a user asks (two unanswerable), each with `mrpvm ask`.

Prints, per question, the verdict (right / wrong / false refusal / false answer / refused), the status,
the heading cited and the answer; then the counts and the precision of `success`. The expectations were
written from the pages before any run. Needs `man` and the four pages installed (Debian: man-db, tar,
openssh-client, curl, git); the rendering is this machine's (width 80, justified, hyphenated).

    .venv/bin/python bench/newcomer_manpages.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PAGES = [("1", "tar"), ("5", "ssh_config"), ("1", "curl"), ("1", "git-commit")]
# (question, strings any of which the answer must hold (None: unanswerable), file it must cite, follow-up)
QUESTIONS: list[tuple[str, list[str] | None, str | None, bool]] = [
    ("How do I change the message of the last commit?", ["--amend"], "git-commit.txt › --amend", False),
    ("What does --max-time do?", ["Maximum time in seconds"], "curl.txt", False),
    ("What does the -x option of tar do?", ["Extract files from an archive"], "tar.txt", False),
    ("What is the default of ServerAliveInterval?", ["default is 0"], "ssh_config.txt", False),
    ("What does ServerAliveInterval do?", ["request a response from the server"], "ssh_config.txt", False),
    ("What is its default?", ["default is 0"], "ssh_config.txt", True),
    ("What does the -z option of tar do?", ["gzip"], "tar.txt", False),
    ("How do I make curl follow redirects?", ["-L, --location"], "curl.txt", False),
    (
        "How do I skip the pre-commit and commit-msg hooks?",
        ["--no-verify or -n is given"],
        "git-commit.txt",
        False,
    ),
    ("What is the default value of ServerAliveCountMax?", ["default value is 3"], "ssh_config.txt", False),
    (
        "Which option makes tar change to a directory before doing anything?",
        ["-C, --directory"],
        "tar.txt",
        False,
    ),
    ("What does the -f option of curl do?", ["Fail fast"], "curl.txt", False),
    ("How do I encrypt a tar archive with a password?", None, None, False),
    ("Which port does ssh use for the X11 display by default?", None, None, False),
]


def render_pages(folder: Path) -> list[Path]:
    out = []
    for section, name in PAGES:
        text = subprocess.run(
            ["man", section, name], capture_output=True, text=True, env={**os.environ, "MANWIDTH": "80"}
        )
        if text.returncode != 0 or not text.stdout.strip():
            sys.exit(f"man {section} {name} is not installed here")
        path = folder / f"{name}.txt"
        path.write_text(text.stdout)
        out.append(path)
    return out


def verdict(want: list[str] | None, cited: str | None, answer: str, cites: list[str], refused: bool) -> str:
    if want is None:
        return "refused" if refused else "false answer"
    if refused:
        return "false refusal"
    right = any(w in answer for w in want) and (cited is None or any(c.startswith(cited) for c in cites))
    return "right" if right else "wrong"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    mrpvm = str(Path(sys.executable).with_name("mrpvm"))
    if shutil.which("man") is None:
        sys.exit("man is not installed here")
    work = Path(tempfile.mkdtemp(prefix="newcomer-"))
    env = {**os.environ, "MRPVM_HOME": str(work / "home")}
    pages = render_pages(work)
    subprocess.run(
        [mrpvm, "ingest", "--kb", "man", *map(str, pages)], env=env, capture_output=True, check=True
    )
    subprocess.run([mrpvm, "kb", "check", "man", "--complete"], env=env, capture_output=True)
    rows, session = [], None
    for question, want, cited, follow_up in QUESTIONS:
        command = [mrpvm, "ask", "--kb", "man", "--json", question]
        if follow_up and session:
            command[2:2] = ["--session", session]
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        turn = json.loads(proc.stdout)
        session, doc = turn["session_id"], turn["response_document"]
        answer = " ".join(g.get("answerMarkdown", "") for g in doc["groups"])
        cites = [f"{s['sourceName']} › {s['section']}" for g in doc["groups"] for s in g.get("kbSources", [])]
        refused = proc.returncode == 3
        rows.append(
            {
                "question": question,
                "verdict": verdict(want, cited, answer, cites, refused),
                "status": doc["status"],
                "exit": proc.returncode,
                "cites": cites[:2],
                "answer": answer[:300],
            }
        )
    success = [r for r in rows if r["status"] == "success"]
    summary = {
        "answerable_right": sum(r["verdict"] == "right" for r in rows),
        "answerable": sum(q[1] is not None for q in QUESTIONS),
        "unanswerable_refused": sum(r["verdict"] == "refused" for r in rows),
        "unanswerable": sum(q[1] is None for q in QUESTIONS),
        "wrong_or_false_answers": sum(r["verdict"] in ("wrong", "false answer") for r in rows),
        "false_refusals": sum(r["verdict"] == "false refusal" for r in rows),
        "success_right": sum(r["verdict"] == "right" for r in success),
        "success": len(success),
    }
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"questions": rows, **summary}, indent=1))
        return
    for r in rows:
        print(
            f"[{r['verdict']}] {r['status']} (exit {r['exit']}) {r['question']}\n    {r['cites'][:1]} {r['answer'][:160]!r}"
        )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
