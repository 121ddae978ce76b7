"""kb-thinkingdb: bounded closure with proofs, entity matching, proof-ordered retrieval, the persistent fact table."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs_plugin
from mrpvm.plugins.kb_thinkingdb.__main__ import plugin as kb_plugin
from mrpvm.plugins.kb_thinkingdb.closure import BaseFact, Closure, entity_key
from mrpvm.plugins.kb_thinkingdb.facts import MemoryFacts
from mrpvm.plugins.kb_thinkingdb.goal import match_entities, prove
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit

EVAL = Path("/work/shared/eval/suite03")

# A small system description of my own: two routes from Orbit to compliance.
FACTS = [
    ("Orbit", "uses", "Relay", "Orbit uses Relay."),
    ("Relay", "provides", "encryption", "Relay provides encryption."),
    (
        "encryption",
        "relevant_for",
        "regulatory compliance",
        "Encryption is relevant for regulatory compliance.",
    ),
    ("Orbit", "depends_on", "Relay", "Orbit depends on Relay."),
    ("Relay", "depends_on", "Vault", "Relay depends on Vault."),
    ("Vault", "provides", "audit logging", "Vault provides audit logging."),
    (
        "audit logging",
        "relevant_for",
        "regulatory compliance",
        "Audit logging is relevant for regulatory compliance.",
    ),
]
DISTRACTOR = "The cafeteria serves soup on Fridays."


def make_units(rows=FACTS, source="sys", extra: list[str] | None = None) -> list[KnowledgeUnit]:
    units = [
        KnowledgeUnit(
            id=f"{source}::chunk-000::unit-{i:03d}",
            sourceId=source,
            chunkId=f"{source}::chunk-000",
            kuType="atomic",
            role="Description",
            topic=s,
            claim=claim,
            subject=s,
            relation=r,
            object=o,
            confidence=0.9,
            unitIndex=i,
        )
        for i, (s, r, o, claim) in enumerate(rows)
    ]
    for j, text in enumerate(extra or []):
        k = len(units)
        units.append(
            KnowledgeUnit(
                id=f"{source}::chunk-001::unit-{j:03d}",
                sourceId=source,
                chunkId=f"{source}::chunk-001",
                kuType="atomic",
                role="Description",
                topic="misc",
                claim=text,
                unitIndex=k,
            )
        )
    return units


def closure_of(rows, **kw) -> Closure:
    c = Closure(**kw)
    for i, (s, r, o, *rest) in enumerate(rows):
        c.add(BaseFact(s, r, o, f"u{i}", rest[0] if rest else f"{s} {r} {o}.", order=i))
    return c.run()


def chain(n: int, relation: str = "depends_on") -> list[tuple[str, str, str]]:
    return [(f"N{i}", relation, f"N{i + 1}") for i in range(n)]


def retrieve(
    question: str, units: list[KnowledgeUnit] | None = None, artifacts: Path | None = None, act="explain"
):
    intent = IntentGroup(index=1, act=act, intent=question, output="free text")
    req = {
        "op": "retrieve",
        "prompt": question,
        "context": [],
        "payload": {"intents": [msgspec.to_builtins(intent)], "units": msgspec.to_builtins(units or [])},
    }
    if artifacts is not None:
        req["paths"] = {"artifacts": str(artifacts)}
    text = kb_plugin.handle(json.dumps(req).encode())
    return intent, parse_document(text, "retrieve")


# --------------------------------------------------------------------------- closure


def test_multi_hop_derivation_with_proof_in_chain_order():
    c = closure_of(FACTS)
    fact = c.find("Orbit", "relevant_for", "regulatory compliance")
    assert fact is not None and fact.depth == 2
    best = c.proofs(c.fact_id("Orbit", "relevant_for", "regulatory compliance"))[0]
    lines = c.proof_lines(best)
    assert lines == [
        "Orbit uses Relay [u0]",
        "Relay provides encryption [u1]",
        "⇒ Orbit has_capability encryption (uses∘provides)",
        "encryption relevant_for regulatory compliance [u2]",
        "⇒ Orbit relevant_for regulatory compliance (has_capability∘relevant_for)",
    ]


def test_rules_cover_transitivity_inheritance_and_part_of():
    c = closure_of(
        [
            ("Sparrow", "instance_of", "bird"),
            ("bird", "has_capability", "flight"),
            ("wheel", "part_of", "axle"),
            ("axle", "part_of", "cart"),
            ("wheel", "provides", "rolling"),
            ("storm", "causes", "flood"),
            ("flood", "causes", "outage"),
        ]
    )
    assert c.find("Sparrow", "has_capability", "flight") is not None
    assert c.find("wheel", "part_of", "cart") is not None
    assert c.find("cart", "has_capability", "rolling") is not None  # a whole has what its parts provide
    assert c.find("storm", "causes", "outage") is not None
    assert c.find("flight", "has_capability", "Sparrow") is None  # nothing runs backwards


def test_depth_bound_stops_derivation():
    rows = chain(12)
    # level d composes at most 2**d stated steps
    for depth, reach in ((1, 2), (2, 4), (3, 8)):
        c = closure_of(rows, max_depth=depth)
        assert c.find("N0", "depends_on", f"N{reach}") is not None
        assert c.find("N0", "depends_on", f"N{reach + 1}") is None
        assert c.depth_reached == depth
        assert max(f.depth for f in c.facts) == depth


def test_max_candidates_bound_stops_derivation():
    c = closure_of(chain(40), max_depth=6, max_candidates=25)
    assert c.derived == 25
    assert c.truncated
    assert sum(1 for f in c.facts if not f.is_base) == 25
    unbounded = closure_of(chain(40), max_depth=6, max_candidates=100_000)
    assert unbounded.derived > 25 and not unbounded.truncated


def test_cycles_terminate_and_proofs_do_not_use_their_goal():
    rows = [
        ("A", "depends_on", "B"),
        ("B", "depends_on", "C"),
        ("C", "depends_on", "A"),
        ("C", "depends_on", "D"),
    ]
    c = closure_of(rows, max_depth=6)
    keys = {(f.skey, f.okey) for f in c.facts}
    assert ("a", "d") in keys and ("b", "a") in keys
    assert all(f.skey != f.okey for f in c.facts)  # no self-loops derived
    fid = c.fact_id("A", "depends_on", "D")
    for proof in c.proofs(fid):
        ids = [step[0] for step in proof.steps]
        assert ids.count(fid) == 1 and ids[-1] == fid


def test_entity_keys_are_case_insensitive_and_stem_tolerant():
    assert entity_key("Sandboxing") == entity_key("sandboxing") == entity_key("the sandboxing")
    assert entity_key("Secure Execution") == entity_key("secure executions")
    source = MemoryFacts(make_units())
    found = match_entities("Why does ORBIT matter for Regulatory Compliance and for encryptions?", source)
    assert [e.key for e in found] == [
        entity_key("Orbit"),
        entity_key("regulatory compliance"),
        entity_key("encryption"),
    ]


def test_longest_entity_wins():
    rows = [("compliance", "relevant_for", "audits", "c."), *FACTS]
    source = MemoryFacts(make_units(rows))
    found = match_entities("Is Orbit relevant for regulatory compliance?", source)
    assert entity_key("regulatory compliance") in [e.key for e in found]
    assert entity_key("compliance") not in [e.key for e in found]


def test_goal_prefers_the_proof_through_the_named_entity():
    source = MemoryFacts(make_units())
    general = prove("Explain why Orbit is relevant for regulatory compliance.", source)
    assert general.proofs, "a proof must exist"
    first = general.closure.proof_lines(general.proofs[0])
    assert "Relay provides encryption" in "\n".join(first)
    via_audit = prove("Explain why Orbit benefits from audit logging for regulatory compliance.", source)
    lines = "\n".join(via_audit.closure.proof_lines(via_audit.proofs[0]))
    assert "Vault provides audit logging" in lines and "Relay depends_on Vault" in lines
    assert "encryption" not in lines


# --------------------------------------------------------------------------- the plugin


def test_retrieve_orders_proof_units_along_the_chain_and_writes_the_proof():
    units = make_units(extra=[DISTRACTOR])
    _, doc = retrieve(
        "Explain why Orbit benefits from audit logging for regulatory compliance.", list(reversed(units))
    )
    resolved = doc.resolved[0]
    want = [
        "sys::chunk-000::unit-000",
        "sys::chunk-000::unit-004",
        "sys::chunk-000::unit-005",
        "sys::chunk-000::unit-006",
    ]
    assert resolved.selected[: len(want)] == want
    assert "sys::chunk-001::unit-000" not in resolved.selected
    assert resolved.sufficient
    assert "Relay depends_on Vault [sys::chunk-000::unit-004]" in resolved.notes
    assert "⇒ Orbit relevant_for regulatory compliance (has_capability∘relevant_for)" in resolved.notes
    assert [u.id for u in doc.units][: len(want)] == want


def test_retrieve_without_triples_falls_back_to_lexical():
    units = make_units(
        rows=[], extra=["Kettles boil water quickly.", DISTRACTOR, "Water boils at 100 degrees."]
    )
    _, doc = retrieve("How quickly do kettles boil water?", units, act="describe")
    assert doc.resolved[0].selected[0] == "sys::chunk-001::unit-000"
    assert "sys::chunk-001::unit-001" not in doc.resolved[0].selected
    assert "no proof" in doc.resolved[0].notes


def test_persistent_fact_table_upsert_replace_and_remove(tmp_path):
    artifacts = tmp_path / "kb" / "kb-thinkingdb"

    def source_text(units, action="upsert"):
        req = {
            "op": "onSourceText",
            "prompt": "index",
            "context": [],
            "paths": {"artifacts": str(artifacts)},
            "payload": {
                "sourceId": "sys",
                "sourceName": "sys.md",
                "units": msgspec.to_builtins(units),
                "action": action,
            },
        }
        return parse_document(kb_plugin.handle(json.dumps(req).encode()), "onSourceText")

    assert source_text(make_units()).result.status == "success"
    db = sqlite3.connect(artifacts / "units.sqlite")
    assert db.execute("SELECT COUNT(*) FROM tdb_facts").fetchone()[0] == len(FACTS)
    question = "Why is Orbit relevant for regulatory compliance?"
    _, doc = retrieve(question, artifacts=artifacts)
    assert doc.resolved[0].selected[:3] == [f"sys::chunk-000::unit-{i:03d}" for i in (0, 1, 2)]
    # the source changes: Relay no longer provides encryption, and the other route is gone
    changed = [r for r in FACTS if r[1] != "provides" and r[2] != "Vault"]
    source_text(make_units(changed))
    assert db.execute("SELECT COUNT(*) FROM tdb_facts").fetchone()[0] == len(changed)
    _, doc = retrieve(question, artifacts=artifacts)
    assert "Proof 1" not in doc.resolved[0].notes
    source_text([], action="remove")
    assert db.execute("SELECT COUNT(*) FROM tdb_facts").fetchone()[0] == 0


def test_one_shot_subprocess_output_is_valid_cnl():
    units = make_units()
    req = {
        "prompt": "Why is Orbit relevant for regulatory compliance?",
        "context": [],
        "payload": {"units": msgspec.to_builtins(units)},
    }
    proc = subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.kb_thinkingdb"],
        input=json.dumps(req).encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    doc = parse_document(proc.stdout.decode(), "retrieve")
    assert doc.result.plugin == "kb-thinkingdb"
    assert "Proof 1: Orbit relevant_for regulatory compliance" in doc.resolved[0].notes


# --------------------------------------------------------------------------- end to end on the shared suite03

_TRIPLE = re.compile(
    r"^(?P<s>.+?) (?P<r>uses|provides|depends on|is relevant for|is part of|supports|causes) (?P<o>.+?)\.$"
)
_REL = {"depends on": "depends_on", "is relevant for": "relevant_for", "is part of": "part_of"}


def _story_units() -> list[KnowledgeUnit]:
    rows = []
    for line in (EVAL / "story.nl").read_text().splitlines():
        m = _TRIPLE.match(line.strip())
        if m:
            rows.append((m["s"], _REL.get(m["r"], m["r"]), m["o"], line.strip()))
    return make_units(rows, source="story")


@pytest.mark.skipif(not EVAL.is_dir(), reason="shared eval suites not mounted")
def test_suite03_end_to_end_with_gs_symbolic():
    spec = json.loads((EVAL / "eval.json").read_text())
    units = _story_units()
    assert len(units) >= 5
    for q in spec["questions"]:
        intent, doc = retrieve(q["input"], units)
        context = " ".join(u.claim or "" for u in doc.units).lower()
        for phrase in q["expected"]["contextMustMention"]:
            assert phrase.lower() in context, (q["id"], phrase)
        req = {
            "op": "solve",
            "prompt": q["input"],
            "context": [],
            "payload": {
                "intent": msgspec.to_builtins(intent),
                "evidence": msgspec.to_builtins(doc.units),
                "resolved": msgspec.to_builtins(doc.resolved[0]),
            },
        }
        answer = parse_document(gs_plugin.handle(json.dumps(req).encode()), "solve")
        assert answer.result.status == "success"
        for phrase in q["expected"]["answerMustMention"]:
            assert phrase.lower() in answer.answer.lower(), (q["id"], phrase)
        for phrase in q["expected"]["answerMustNotContain"]:
            assert phrase.lower() not in answer.answer.lower()


def test_a_proof_makes_the_intent_sufficient_and_its_notes_stay_parseable():
    from mrpvm.plugins.gs_symbolic.proofs import parse_notes

    question = (
        "Explain in detail why, despite budget overruns, staffing shortages and vendor delays, "
        "Orbit is relevant for regulatory compliance."
    )
    _, doc = retrieve(question, make_units(extra=[DISTRACTOR]))
    resolved = doc.resolved[0]
    assert resolved.sufficient
    assert "sufficient: a proof links the intent's entities" in resolved.notes
    chains = parse_notes(resolved.notes)
    assert chains and chains[0].conclusion is not None
    assert chains[0].conclusion.relation == "relevant_for"
    assert chains[0].unit_ids == resolved.selected[: len(chains[0].unit_ids)]
