"""Do two checkouts index and answer the same? Ingest each eval suite's story as a KB source, then ask
every question with that KB mounted (the engine choosing, or each kb-plugin pinned: INGEQ_PINNED).

    CHECKOUT/.venv/bin/python bench/ingest_equivalence.py OUT.json SUITE_DIR... [--plugins kb-fast,...]

OUT.json: per suite, each kb-plugin's stored units (id, hash, sorted content terms) and, per kb-plugin and
question, the answer text. Compare two OUT files with `--compare A.json B.json` (prints the differences;
exit 1 when any). Runs the checkout's own `mrpvm` (the interpreter running this script).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

# "engine": the planners choose the kb-plugin; set INGEQ_PINNED=kb-fast,kb-thinkingdb,kb-balanced to pin each
PINNED = tuple(os.environ.get("INGEQ_PINNED", "engine").split(","))


def mrpvm(home: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env["MRPVM_HOME"] = home
    exe = str(Path(sys.executable).with_name("mrpvm"))
    return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=900)


def stored(home: str) -> dict[str, list]:
    out = {}
    for db in Path(home, "artifacts").glob("*/*/units.sqlite"):
        con = sqlite3.connect(db)
        rows = con.execute("SELECT id, hash, terms FROM units ORDER BY id").fetchall()
        con.close()
        # unit ids start with the source id, which depends on the home: compared without it
        out[db.parent.name] = sorted([i.split("::", 1)[-1], h, sorted(t.split())] for i, h, t in rows)
    return out


def run(out_path: str, suites: list[str]) -> None:
    result = {}
    for folder in suites:
        spec = json.loads(Path(folder, "eval.json").read_text())
        home = tempfile.mkdtemp(prefix="ingeq-")
        story = Path(home, "story.md")
        story.write_text(Path(folder, spec["storyFile"]).read_text())
        r = mrpvm(home, "ingest", "--kb", "s", "--json", str(story))
        if r.returncode != 0:
            raise SystemExit(f"ingest failed: {r.stderr[-800:]}")
        answers = {}
        for plugin in PINNED:
            for q in spec["questions"]:
                pin = ["--kb-plugin", plugin] if plugin != "engine" else []
                a = mrpvm(home, "ask", "--kb", "s", *pin, "--no-daemon", "--json", q["input"])
                try:
                    answers[f"{plugin} {q['id']}"] = json.loads(a.stdout).get("answer", "")
                except json.JSONDecodeError:
                    answers[f"{plugin} {q['id']}"] = f"exit {a.returncode}: {a.stderr[-200:]}"
        result[spec["suiteId"]] = {"units": stored(home), "answers": answers}
        print(
            f"{spec['suiteId']}: {sum(len(v) for v in result[spec['suiteId']]['units'].values())} rows, "
            f"{len(answers)} answers",
            file=sys.stderr,
        )
    Path(out_path).write_text(json.dumps(result, indent=1, sort_keys=True))


def compare(a_path: str, b_path: str) -> int:
    a, b = json.loads(Path(a_path).read_text()), json.loads(Path(b_path).read_text())
    diffs = 0
    for suite in sorted(set(a) | set(b)):
        sa, sb = a.get(suite, {}), b.get(suite, {})
        for plugin in sorted(set(sa.get("units", {})) | set(sb.get("units", {}))):
            ua, ub = (
                sorted([i.split("::", 1)[-1], h, t] for i, h, t in side.get("units", {}).get(plugin, []))
                for side in (sa, sb)
            )
            if ua != ub:
                diffs += 1
                print(f"{suite} {plugin}: stored units differ ({len(ua or [])} vs {len(ub or [])} rows)")
        for key in sorted(set(sa.get("answers", {})) | set(sb.get("answers", {}))):
            if sa.get("answers", {}).get(key) != sb.get("answers", {}).get(key):
                diffs += 1
                print(f"{suite} {key}: answers differ")
        units = sum(len(v) for v in sa.get("units", {}).values())
        print(f"{suite}: {units} stored unit rows, {len(sa.get('answers', {}))} answers compared")
    print("identical" if diffs == 0 else f"{diffs} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        raise SystemExit(compare(sys.argv[2], sys.argv[3]))
    run(sys.argv[1], sys.argv[2:])
