"""What compiling sd-symbolic's build with mypyc would give: CPU of the serial build (and its analysis for
the kb-plugins) of one source, interpreted vs compiled, alternated, with the units' digest of each side.

    CHECKOUT/.venv/bin/python bench/sd_compiled_probe.py FILE [--rounds 4] [--pairs 2] [--dir DIR] [--json]
                                                         [--interpreted-only]

The checkout's package trees are copied into DIR (a temporary folder unless given; an existing DIR with
compiled modules is reused), the modules of MODULES compiled there with the checkout's mypyc (a few minutes
of one core), and each round runs a fresh process per side: one build first (its lazy regexes compile, its
caches fill), then `--rounds`' builds, GC off as the worker runs them. The project is not changed: the
compiled side imports the copy (PYTHONPATH). Prints figures, the 1-minute load and whether both
sides gave the same units and analysis (`same_units`, by digest); asserts nothing.

Left interpreted: sdk/patterns.py (its LazyPattern replaces itself through the instance's __dict__, which a
mypyc class has not) and source_units/halves.py (the fork's orchestration, not hot; mypyc of mypy 2.4 stops with
an internal error on its memoryview item assignment).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
TREES = ("kernel", "knowledge", "plugins", "protocol", "shells")
UNITS = "plugins/sd_symbolic/source_units"
MODULES = [
    "protocol/analysis.py",
    *sorted(
        f"{UNITS}/{p.name}"
        for p in (CHECKOUT / UNITS).glob("*.py")
        if p.name not in ("__init__.py", "halves.py")
    ),
    "plugins/sd_symbolic/shared/roles.py",
    "plugins/sd_symbolic/shared/triples.py",
    "plugins/sd_symbolic/shared/topics.py",
    "plugins/sdk/text.py",
    "plugins/sdk/lexicon.py",
]

CHILD = r"""
import gc, hashlib, json, sys, time
from pathlib import Path
import msgspec
import mrpvm.protocol.analysis as analysis
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_analysed_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
text = Path(sys.argv[1]).read_text()
meta = SourceMeta(source_id="src-probe", source_name=Path(sys.argv[1]).name, source_type="text", created_at="t")
gc.disable()
t = time.process_time()
units, shipped = build_analysed_tree(text, meta, halves=False)
first = time.process_time() - t
enc = msgspec.msgpack.Encoder()
digest = hashlib.sha256(enc.encode(units) + enc.encode(shipped)).hexdigest()[:16]
cpu = []
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    build_analysed_tree(text, meta, halves=False)
    cpu.append(time.process_time() - t)
compiled = not analysis.__file__.endswith(".py")
print(json.dumps({"digest": digest, "units": len(units), "first": first, "cpu": cpu, "compiled": compiled}))
"""


def compile_copy(folder: Path) -> None:
    """The package trees copied into folder/mrpvm and MODULES compiled there (mypyc), unless done."""
    if any(folder.glob("mrpvm/protocol/analysis.*.so")):
        return
    pkg = folder / "mrpvm"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for tree in TREES:
        shutil.copytree(CHECKOUT / tree, pkg / tree, ignore=shutil.ignore_patterns("__pycache__"))
    mypyc = Path(sys.executable).with_name("mypyc")
    # the compiler's output to stderr: stdout carries the figures (--json)
    subprocess.run([str(mypyc), *(f"mrpvm/{m}" for m in MODULES)], cwd=folder, check=True, stdout=sys.stderr)


def run_side(file: str, rounds: int, folder: Path | None) -> dict:
    env = dict(os.environ)
    if folder is not None:
        env["PYTHONPATH"] = str(folder)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, file, str(rounds)], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=4, help="builds per process after the first")
    ap.add_argument("--pairs", type=int, default=2, help="alternated (interpreted, compiled) process pairs")
    ap.add_argument("--dir", default=None, help="where the compiled copy is (made when missing)")
    ap.add_argument("--interpreted-only", action="store_true", help="no compile: the interpreted side alone")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    order: list[tuple[str, Path | None]] = [("interpreted", None)]
    if not a.interpreted_only:
        folder = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="sd-mypyc-"))
        compile_copy(folder)
        order.append(("compiled", folder))
    sides: dict[str, list[dict]] = {name: [] for name, _ in order}
    for _ in range(a.pairs):
        for name, where in order:
            result = run_side(a.file, a.rounds, where) | {"load": os.getloadavg()[0]}
            sides[name].append(result)
            if not a.json:
                cpu = " ".join(f"{c:.3f}" for c in result["cpu"])
                print(f"{name}: first {result['first']:.3f} s, then {cpu} (load {result['load']:.1f})")
    summary = {
        name: {
            "median_cpu_s": round(statistics.median(c for r in runs for c in r["cpu"]), 3),
            "median_first_s": round(statistics.median(r["first"] for r in runs), 3),
            "digests": sorted({r["digest"] for r in runs}),
            "compiled": all(r["compiled"] for r in runs),
        }
        for name, runs in sides.items()
    }
    if "compiled" in summary:
        summary["same_units"] = summary["interpreted"]["digests"] == summary["compiled"]["digests"]
    summary["units"] = sides["interpreted"][0]["units"]
    print(json.dumps(summary) if a.json else json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
