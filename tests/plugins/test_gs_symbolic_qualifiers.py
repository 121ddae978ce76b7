"""Golden tests of polarity and hedges (issue 20, item 5) on a document written here: negation, "not
usually", "rarely", "no longer", "formerly", "except", "only if" and "may" are read, and a yes/no answer
quotes the one sentence whose polarity it reports."""

from __future__ import annotations

import json

import msgspec
import pytest
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import CnlDocument, IntentGroup

STORY = """Kestrel backup tool

Kestrel copies a folder to a remote server every night. Kestrel does not usually compress the archives it
sends. The upload resumes automatically after a network failure. Kestrel encrypts every archive except
the local cache archives. Kestrel runs on battery power only if the laptop is plugged in at the start of
the night. The FTP transport is no longer supported. Kestrel was formerly called Marlin. The server may
delete archives older than a year. Kestrel rarely needs a restart after an update.
"""
UNITS = [u for u in build_tree(STORY, SourceMeta("kestrel", "kestrel.md", "text")) if u.kuType == "atomic"]


def solve(question: str) -> CnlDocument:
    payload = {
        "intent": msgspec.to_builtins(
            IntentGroup(index=1, act="verify", intent=question, output="free text")
        ),
        "evidence": msgspec.to_builtins(UNITS),
        "guidance": [],
        "allowDecompose": False,
    }
    request = {"op": "solve", "prompt": question, "context": [], "payload": payload}
    return parse_document(gs.handle(json.dumps(request).encode()), "solve")


@pytest.mark.parametrize(
    ("question", "answer", "quoted"),
    [
        # a hedged negative sentence answered No, quoting it
        ("Does Kestrel compress the archives?", "No", "does not usually compress"),
        ("Does Kestrel need a restart after an update?", "No", "rarely needs a restart"),
        ("Is the FTP transport supported?", "No", "no longer supported"),
        ("Is Kestrel called Marlin?", "No", "formerly called Marlin"),
        ("Was Kestrel called Marlin?", "Yes", "formerly called Marlin"),
        ("Does Kestrel encrypt the local cache archives?", "No", "except the local cache archives"),
        ("Does Kestrel encrypt every archive?", "Yes", "except the local cache archives"),
        ("Does the upload resume after a network failure?", "Yes", "resumes automatically"),
        ("Does Kestrel run on battery power?", "Only under a condition", "only if the laptop is plugged in"),
        ("Does the server delete archives older than a year?", "Possibly", "may delete archives"),
    ],
)
def test_a_yes_no_answer_reports_the_polarity_of_the_sentence_it_quotes(question, answer, quoted):
    doc = solve(question)
    text = doc.answer.strip()
    assert text.startswith(f"{answer}. "), text
    assert quoted in text
    sentences = [s for s in STORY.replace("\n", " ").split(". ") if quoted in s]
    assert len(sentences) == 1 and sentences[0].strip() in text  # the very sentence that states it
    assert doc.result.status == "success"
