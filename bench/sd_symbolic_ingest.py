"""Measure sd-symbolic normalizePersistentContext alone: KUs/s and MB/s on a generated source.

    .venv/bin/python bench/sd_symbolic_ingest.py [--mb 1.0] [--json] [--subprocess]

Prints figures; asserts nothing. --subprocess also times the real one-shot process (JSON in, CNL out).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.cnl import render_document
from mrpvm.protocol.document import CnlDocument, PluginResult

NAMES = ["Arden", "Borealis", "Cobalt", "Delphi", "Ember", "Fjord", "Granite", "Helix", "Ion", "Juno"]
NOUNS = [
    "cache",
    "scheduler",
    "gateway",
    "ledger",
    "compiler",
    "sensor",
    "router",
    "archive",
    "queue",
    "vault",
]
VERBS = ["uses", "provides", "depends on", "supports", "is part of"]


def sentence(rng: random.Random) -> str:
    a, b = rng.choice(NAMES), rng.choice(NOUNS)
    kind = rng.random()
    if kind < 0.15:
        return f"{a} {rng.choice(VERBS)} the {b}."
    if kind < 0.3:
        return f"The {b} in {a} must never exceed {rng.randint(2, 90)} requests because the {rng.choice(NOUNS)} stalls."
    if kind < 0.45:
        return (
            f"Unlike the {b}, the {rng.choice(NOUNS)} of {a} keeps a copy of every record for later audits."
        )
    return (
        f"In {rng.randint(1900, 2020)} the team at {a} rebuilt the {b} and moved its {rng.choice(NOUNS)} "
        f"closer to the {rng.choice(NOUNS)} so that operators could inspect it."
    )


def generate(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    section = 0
    while total < size:
        if rng.random() < 0.08:
            section += 1
            parts.append(f"## Section {section}: {rng.choice(NAMES)} {rng.choice(NOUNS)}")
        elif rng.random() < 0.08:
            steps = "\n".join(
                f"{i}. Open the {rng.choice(NOUNS)} and check the {rng.choice(NOUNS)}." for i in range(1, 5)
            )
            parts.append(f"To reset the {rng.choice(NOUNS)}:\n\n{steps}")
        else:
            parts.append(" ".join(sentence(rng) for _ in range(rng.randint(2, 6))))
        total += len(parts[-1]) + 2
    return "\n\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--subprocess", action="store_true")
    args = ap.parse_args()
    text = generate(int(args.mb * 1_000_000))
    c0 = time.process_time()
    t0 = time.perf_counter()
    units = build_tree(text, SourceMeta("bench", "bench.md", "text", created_at="2024-01-01T00:00:00+00:00"))
    t1 = time.perf_counter()
    rendered = render_document(
        CnlDocument(
            result=PluginResult(status="success", plugin="sd-symbolic", confidence="high"), units=units
        )
    )
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    figures = {
        "source_bytes": len(text.encode()),
        "kus": len(units),
        "tree_s": round(t1 - t0, 3),
        "render_s": round(t2 - t1, 3),
        "sd_symbolic_kus_per_s": round(len(units) / (t2 - t0)),
        "cpu_s": round(cpu, 3),
        "sd_symbolic_kus_per_cpu_s": round(len(units) / cpu),
        "output_bytes": len(rendered.encode()),
    }
    if args.subprocess:
        request = json.dumps(
            {
                "prompt": "",
                "context": [],
                "op": "normalizePersistentContext",
                "payload": {"text": text, "sourceName": "bench.md"},
                "budget": {"deadlineMs": 60000},
            }
        )
        t3 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "mrpvm.plugins.sd_symbolic"],
            input=request.encode(),
            capture_output=True,
            check=False,
        )
        figures["subprocess_s"] = round(time.perf_counter() - t3, 3)
        figures["subprocess_exit"] = proc.returncode
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
