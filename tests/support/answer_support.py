"""Asking gs-symbolic a question over documents written in a test, as a turn does: sd-symbolic's units,
kb-balanced's retrieval (its selection and the collection's term weights), then gs-symbolic's solve."""

from __future__ import annotations

import json

import msgspec
import pytest
from kb_corpus import retrieve_request
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs
from mrpvm.plugins.gs_symbolic.evidence import Sentence
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.plugins.sdk.embedding import available
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit, ResolvedIntent
from mrpvm.protocol.envelope import encode_request

needs_model = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")


def sentence_of(text: str) -> Sentence:
    """One evidence sentence of an atomic unit, for tests of gs-symbolic's sentence-level readers."""
    unit = KnowledgeUnit(id="u", sourceId="s", chunkId="c", kuType="atomic", role="Description", topic="t")
    return Sentence(text, unit, terms(text), (0, 0, 0))


def units_of(text: str, name: str = "doc.md", source_id: str = "doc") -> list[KnowledgeUnit]:
    """Every unit sd-symbolic makes of a document (atomic, section and source levels)."""
    kind = "markdown" if name.endswith(".md") else "text"
    return build_tree(text, SourceMeta(source_id, name, kind))


def ask(question: str, units: list[KnowledgeUnit]) -> CnlDocument:
    """kb-balanced's retrieval over `units`, then gs-symbolic's answer from the units it selected."""
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    doc, failure, _ = balanced.run(encode_request(retrieve_request([group], units)))
    assert doc is not None, failure
    resolved = doc.resolved[0]
    by_id = {u.id: u for u in units}
    return solve(group, [by_id[i] for i in resolved.selected if i in by_id], resolved)


def solve(
    group: IntentGroup, evidence: list[KnowledgeUnit], resolved: ResolvedIntent | None = None
) -> CnlDocument:
    """gs-symbolic's answer to one intent from the evidence given (and the kb's resolved intent, if any)."""
    payload: dict[str, object] = {
        "intent": msgspec.to_builtins(group),
        "evidence": msgspec.to_builtins(evidence),
        "guidance": [],
        "allowDecompose": False,
    }
    if resolved is not None:
        payload["resolved"] = msgspec.to_builtins(resolved)
    request = {"op": "solve", "prompt": group.intent, "context": [], "payload": payload}
    return parse_document(gs.handle(json.dumps(request).encode()), "solve")


def solve_question(question: str, units: list[KnowledgeUnit], answer_type: str = "") -> CnlDocument:
    """gs-symbolic's answer to `question` (answer type as the planner would give it) from the atomic units."""
    group = IntentGroup(index=1, act="identify", intent=question, output="free text", answerType=answer_type)
    return solve(group, [u for u in units if u.kuType == "atomic"])
