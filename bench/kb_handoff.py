"""What handing a source to the kb-plugins costs, inline JSON (before) vs the units file (after), in-process.

    .venv/bin/python bench/kb_handoff.py FILE [--plugins 3] [--json]

The source's units come from sd-symbolic's own tree builder (in-process). "inline": the kernel encodes
one onSourceText JSON request per kb-plugin; each plugin decodes it and analyses every unit (DS009 fields
and hash) before its index write. "file": the kernel encodes and analyses once (protocol/handoff.py);
each plugin decodes the file and takes the analysis as it is. The index write itself (tantivy, SQLite,
kb-balanced's vectors) is the same either way and not measured here. CPU seconds (process_time) and
bytes; the figures are per ingest of FILE by `--plugins` kb-plugins.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mrpvm.plugins.kb_common.fields import unit_fields, unit_hash
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta, source_id_for
from mrpvm.protocol import analysis
from mrpvm.protocol.envelope import OnSourceTextPayload, Paths, Request, decode_request, encode_request
from mrpvm.protocol.gc_pause import paused_gc
from mrpvm.protocol.handoff import ANALYSER, decode_handoff, encode_handoff


def cpu(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return out, time.process_time() - start


def fresh_cache() -> None:
    """Each plugin is its own process: its token cache starts empty."""
    analysis._TERMS_CACHE.clear()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--plugins", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    text = Path(a.file).read_text()
    name = Path(a.file).name
    sid = source_id_for(name, text)
    units = build_tree(text, SourceMeta(source_id=sid, source_name=name, source_type="markdown"))
    n = len(units)

    request = Request(
        op="onSourceText",
        prompt=f"Index source {name}",
        context=[],
        payload=OnSourceTextPayload(kbId="kb", sourceId=sid, sourceName=name, text=text, units=units),
        paths=Paths(artifacts="/tmp/x"),
    )
    body, enc_inline = cpu(encode_request, request)

    def plugin_inline():
        req = decode_request(body)
        return [(unit_hash(u), unit_fields(u)) for u in req.payload.units]

    inline_plugin = []
    for _ in range(a.plugins):
        fresh_cache()
        _, secs = cpu(plugin_inline)
        inline_plugin.append(secs)

    fresh_cache()
    data, enc_file = cpu(encode_handoff, sid, name, text, units)

    def plugin_file():  # as kb_common does: decode, then the store's prepare (both with the GC paused)
        doc = decode_handoff(data, sid)
        assert doc.analyser == ANALYSER
        with paused_gc():
            return [(x.hash, x.fields()) for x in doc.analysis]

    file_plugin = []
    for _ in range(a.plugins):
        fresh_cache()
        got, secs = cpu(plugin_file)
        file_plugin.append(secs)
    fresh_cache()
    same = got == [(h, f) for h, f in plugin_inline()]
    out = {
        "file": a.file,
        "units": n,
        "plugins": a.plugins,
        "inline": {
            "request_bytes": len(body),
            "kernel_encode_cpu_s": round(enc_inline * a.plugins, 3),
            "plugin_decode_and_analyse_cpu_s": [round(s, 3) for s in inline_plugin],
            "total_cpu_s": round(enc_inline * a.plugins + sum(inline_plugin), 3),
        },
        "file_handoff": {
            "file_bytes": len(data),
            "kernel_encode_and_analyse_cpu_s": round(enc_file, 3),
            "plugin_decode_cpu_s": [round(s, 3) for s in file_plugin],
            "total_cpu_s": round(enc_file + sum(file_plugin), 3),
        },
        "same_analysis": same,
    }
    if a.json:
        print(json.dumps(out))
    else:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
