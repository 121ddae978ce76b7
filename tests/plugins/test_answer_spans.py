"""The span an answer quotes (gs_symbolic/spans.py, issue 20), on a document written here: the sentence
that names the answer is quoted rather than the sentence after it that refers back to it ("This key …"),
which scores with its antecedent's words and would pull both sentences into the answer."""

from __future__ import annotations

import json

import msgspec
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs_plugin
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup

TABLES = """# Kiln configuration

## The kiln table

Firing data lives in one place. Initially only one key of the table is valid and is mandatory \
for the table: `schedule`. This key must have a value of a list of strings naming the shelves that take \
part in each firing of the kiln table, in the order the kiln loads them (currently that means the shelves \
the scheduler reads once per batch, before the first firing of the day starts).
"""


def test_the_sentence_that_names_the_answer_is_quoted_not_the_one_referring_back_to_it():
    meta = SourceMeta("conf", "conf.md", "text", created_at="t0")
    evidence = [u for u in build_tree(TABLES, meta) if u.kuType == "atomic"]
    intent = IntentGroup(
        index=1, act="identify", intent="Which key is mandatory in the [kiln] table?", output="a short answer"
    )
    payload = {
        "intent": msgspec.to_builtins(intent),
        "evidence": msgspec.to_builtins(evidence),
        "guidance": [],
        "allowDecompose": False,
    }
    req = {"op": "solve", "prompt": intent.intent, "context": [], "payload": payload}
    text = parse_document(gs_plugin.handle(json.dumps(req).encode()), "solve").answer
    assert "`schedule`" in text
    assert "This key must" not in text, text


PRINTING = """# Printing notes

## Page formats

Most printers in the lab accept PNG, but some do not and only read the older PCX format, which the \
spooler rejects as corrupt.

If a printer cannot read PNG, you can set a page format that says which format the pages are sent in, \
while still keeping the scans as PNG on the share. This lets the viewer show them as usual.

To do so, you can add a print profile with the `send-format` key.
"""


def test_to_do_so_is_quoted_with_the_statement_of_what_it_does():
    """ "To do so, …" opens its own paragraph: it stays with the statement it refers back to (sd groups it
    there, gs reads it with that statement's words) and is quoted after that statement, not after the
    remark between them ("This lets …")."""
    question = "Which print profile key sends pages in a format like PCX while keeping the scans as PNG?"
    text = ask(question, units_of(PRINTING)).answer
    assert "`send-format`" in text, text
    assert text.startswith("If a printer cannot read PNG"), text
    assert "This lets" not in text, text
