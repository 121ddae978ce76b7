"""A digest of sd-symbolic's KU tree and its analysis for each file given: run it with two checkouts'
interpreters and compare the lines (same digest = byte-identical units and analysis). Also the CPU seconds
of each build (in-process, halves off so the one process does all the work).

    CHECKOUT/.venv/bin/python bench/sd_units_digest.py FILE... [--rounds N]

Prints `digest cpu_s units path` per file; asserts nothing.
"""

from __future__ import annotations

import hashlib
import sys
import time

import msgspec
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_analysed_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

_ENCODE = msgspec.msgpack.Encoder(order="deterministic").encode


def digest(path: str) -> tuple[str, float, int]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    meta = SourceMeta(source_id="s", source_name=path.rsplit("/", 1)[-1], source_type="text", created_at="t")
    start = time.process_time()
    units, analysis = build_analysed_tree(text, meta, halves=False)
    cpu = time.process_time() - start
    return hashlib.sha256(_ENCODE([units, analysis])).hexdigest()[:20], cpu, len(units)


def main() -> None:
    args = sys.argv[1:]
    rounds = 1
    if "--rounds" in args:
        k = args.index("--rounds")
        rounds = int(args[k + 1])
        del args[k : k + 2]
    for path in args:
        for _ in range(rounds):
            d, cpu, n = digest(path)
            print(f"{d} {cpu:.3f} {n} {path}", flush=True)


if __name__ == "__main__":
    main()
