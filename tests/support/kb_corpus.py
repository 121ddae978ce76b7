"""Small hand-written KU trees and request helpers for the kb plugin tests (not tied to any eval story)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import (
    OnSourceTextPayload,
    Paths,
    Request,
    RetrievePayload,
    encode_request,
)
from mrpvm.protocol.framing import encode_frame, read_frame

ROOT = Path(__file__).resolve().parents[2]

Section = tuple[str, list[tuple[str, str, str]]]  # (title, [(role, topic, text)])

NETWORK: list[Section] = [
    (
        "Router setup",
        [
            (
                "Procedure",
                "resetting the router",
                "1. Hold the reset button on the back of the router for ten seconds.\n"
                "2. Wait until the status light blinks amber.\n"
                "3. Reconnect with the default password printed on the label.",
            ),
            (
                "Definition",
                "mesh network",
                "A mesh network is a set of wireless nodes that relay traffic for each other, "
                "so coverage extends across the whole house.",
            ),
            (
                "Constraint",
                "guest network isolation",
                "The guest network cannot reach printers or shared drives on the main network.",
            ),
        ],
    ),
    (
        "Wireless bands",
        [
            (
                "Comparison",
                "5 GHz versus 2.4 GHz",
                "The 5 GHz band is faster than the 2.4 GHz band, but its signal passes through walls less well.",
            ),
            (
                "Description",
                "2.4 GHz band reach",
                "The 2.4 GHz band reaches farther and suits smart plugs, sensors and other slow devices.",
            ),
        ],
    ),
]

BAKING: list[Section] = [
    (
        "The starter",
        [
            (
                "Narrative",
                "reviving the starter",
                "In 2019 Mara revived a starter her grandmother had dried on linen, feeding it rye flour for a week.",
            ),
            (
                "Definition",
                "sourdough starter",
                "A sourdough starter is a culture of wild yeast and lactic bacteria kept alive with flour and water.",
            ),
            (
                "Procedure",
                "feeding the starter",
                "1. Discard half of the starter.\n2. Add equal weights of flour and water.\n"
                "3. Leave it at room temperature until it doubles.",
            ),
        ],
    ),
    (
        "Baking the loaf",
        [
            (
                "Explanation",
                "steam and crust",
                "Steam during the first twenty minutes keeps the crust soft, so the loaf can expand fully.",
            ),
            (
                "Evaluation",
                "dense crumb",
                "A dense, gummy crumb usually means the dough was underproofed.",
            ),
        ],
    ),
]


def unit(
    ident: str,
    role: str,
    topic: str,
    text: str,
    *,
    source: str = "inline",
    kind: str = "atomic",
    scopes: list[str] | None = None,
    parents: list[str] | None = None,
    children: list[str] | None = None,
    acts: list[str] | None = None,
) -> KnowledgeUnit:
    proc = role == "Procedure"
    return KnowledgeUnit(
        id=ident,
        sourceId=source,
        chunkId=f"{source}::chunk-000",
        kuType=kind,
        role=role,
        topic=topic,
        claim=None if proc else text,
        procedure=text if proc else None,
        phaseScopes=scopes or [],
        parentUnitIds=parents or [],
        childUnitIds=children or [],
        utilityActs=acts or [],
        sourceName=f"{source}.md",
    )


def tree(source: str, sections: list[Section], summary: str | None = None) -> list[KnowledgeUnit]:
    """A DS030 tree: atomic units under section composites under one source aggregate."""
    agg_id = f"{source}::source-summary"
    units: list[KnowledgeUnit] = []
    section_ids: list[str] = []
    n = 0
    for s, (title, items) in enumerate(sections):
        sec_id = f"{source}::section-{s:03d}"
        section_ids.append(sec_id)
        child_ids = []
        texts = []
        for role, topic, text in items:
            uid = f"{source}::chunk-{s:03d}::unit-{n:03d}"
            n += 1
            child_ids.append(uid)
            texts.append(text.split("\n")[0])
            units.append(unit(uid, role, topic, text, source=source, parents=[sec_id]))
        units.append(
            unit(
                sec_id,
                "Description",
                title,
                " ".join(texts),
                source=source,
                kind="composite",
                parents=[agg_id],
                children=child_ids,
            )
        )
    gist = summary or " ".join(title for title, _ in sections)
    units.append(
        unit(agg_id, "Description", source, gist, source=source, kind="aggregate", children=section_ids)
    )
    return units


def intent(index: int, act: str, text: str, output: str = "a short answer") -> IntentGroup:
    return IntentGroup(index=index, act=act, intent=text, output=output)


def retrieve_request(
    intents: list[IntentGroup],
    units: list[KnowledgeUnit] | None = None,
    artifacts: str | Path | None = None,
    **payload,
) -> Request:
    return Request(
        op="retrieve",
        prompt=intents[0].intent if intents else "",
        context=[],
        payload=RetrievePayload(intents=intents, units=units or [], **payload),
        paths=Paths(artifacts=str(artifacts) if artifacts else None),
    )


def source_request(
    source_id: str, units: list[KnowledgeUnit], artifacts: str | Path, action: str = "upsert"
) -> Request:
    return Request(
        op="onSourceText",
        prompt=f"index {source_id}",
        context=[],
        payload=OnSourceTextPayload(
            kbId="kb-test", sourceId=source_id, sourceName=f"{source_id}.md", units=units, action=action
        ),
        paths=Paths(artifacts=str(artifacts)),
    )


def run_plugin(module: str, data: bytes) -> subprocess.CompletedProcess:
    """One-shot: a real subprocess, JSON on stdin."""
    env = {k: v for k, v in os.environ.items() if k != "MRPVM_WORKER"}
    return subprocess.run(
        [sys.executable, "-m", f"mrpvm.plugins.{module}"],
        input=data,
        capture_output=True,
        timeout=60,
        env=env,
    )


def one_shot(module: str, request: Request, op: str = "retrieve") -> CnlDocument:
    proc = run_plugin(module, encode_request(request))
    assert proc.returncode == 0, proc.stderr.decode()
    return parse_document(proc.stdout.decode(), op)


class Worker:
    """A plugin in worker mode (MRPVM_WORKER=1), spoken to with Content-Length frames."""

    def __init__(self, module: str):
        env = dict(os.environ, MRPVM_WORKER="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"mrpvm.plugins.{module}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.next_id = 0

    def call(self, request: Request, op: str = "retrieve") -> CnlDocument:
        self.next_id += 1
        body = json.loads(encode_request(request))
        body["id"] = f"req-{self.next_id}"
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(encode_frame(json.dumps(body).encode()))
        self.proc.stdin.flush()
        reply = read_frame(self.proc.stdout)
        assert reply is not None, "worker closed its output"
        doc = parse_document(reply.decode(), op)
        assert doc.result.request == f"req-{self.next_id}"
        return doc

    def close(self) -> int:
        assert self.proc.stdin
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()
        return code


def ids(doc: CnlDocument) -> list[str]:
    return [u.id for u in doc.units]


def selected(doc: CnlDocument, index: int = 1) -> list[str]:
    return next(r.selected for r in doc.resolved if r.index == index)


def to_json(obj) -> bytes:
    return msgspec.json.encode(obj)
