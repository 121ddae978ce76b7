"""A YAML entry's fields are statements of their own, and the field a question asks of the record it names
answers it (gs_symbolic/record_fields.py, sd_symbolic/source_units/tree.py's `_definition`).

Before: an entry's fields were joined onto its prose with no full stop ("The path the mirror was written to
returned: success type: str"), so a sentence splitter read one sentence; "What is the default value of
timeout for heron_mirror?" was answered by the module's description, which writes "timeout" and "default"
but no value, or refused (the module's own name narrowed the evidence to the units that write it); and a
licence line read as a heading ("Heron Shared Source Licence v2.1+ (see …)") dated an option's description
as "2.1" for "Which version added …?"."""

from __future__ import annotations

from answer_support import ask, needs_model, solve, units_of
from mrpvm.plugins.gs_symbolic.answer_form import labels_release
from mrpvm.plugins.gs_symbolic.documented import marks_documented
from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.plugins.gs_symbolic.named import about_named, names_document
from mrpvm.plugins.gs_symbolic.record_fields import record_fields
from mrpvm.plugins.gs_symbolic.unit_pieces import unit_pieces
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.document import IntentGroup

MODULE = """# -*- coding: utf-8 -*-

# Heron Shared Source Licence v2.1+ (see LICENCE or https://licences.example.org/hssl-2.1.txt)

DOCUMENTATION = r'''
module: heron_mirror
short_description: Mirrors a bucket to a second region
description:
     - Copies every object of a bucket to a bucket in another region.
     - You can bound the copy by O(timeout), this is the default behaviour when nothing else is given.
options:
  bucket:
    description:
      - The name of the bucket to mirror.
    type: str
    required: true
  timeout:
    description:
      - Seconds the copy may take before the module gives up.
    type: int
    default: 120
  parallel:
    description:
      - How many objects are copied at the same time.
    type: int
    default: 8
    version_added: "1.2"
  interval:
    description:
      - Seconds to wait before the bucket is polled again.
    type: int
    default: 30
  endpoint:
    description:
      - The address of the bucket service to poll.
    type: str
  region:
    description:
      - The region that receives the copy.
      - Cannot be combined with O(parallel), which copies within one region only.
    type: str
'''

EXAMPLES = r'''
- name: Mirror the logs bucket
  acme.cloud.heron_mirror:
    bucket: logs
    region: eu-west-2
'''

RETURN = r'''
target:
  description: The path the mirror was written to
  returned: success
  type: str
'''
"""


def _unit(units, title):
    return next(u for u in units if u.chunkType == "definition" and u.title == title)


def _over_entries(question: str, *titles: str):
    """gs-symbolic's answer over the named entries alone (a retrieval that brings exactly those)."""
    units = units_of(MODULE, "heron_mirror.py")
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    return solve(group, [_unit(units, t) for t in titles])


def test_the_fields_of_an_entry_are_statements_apart_from_its_prose():
    units = units_of(MODULE, "heron_mirror.py")
    target = _unit(units, "target")
    pieces = [p for p, _, _ in unit_pieces(target.claim or "", target.title or "")]
    # the description has no full stop: it is still one statement, and its fields another
    assert "The path the mirror was written to" in pieces, pieces
    assert not any("written to returned" in p for p in pieces), pieces
    assert record_fields(target) == [("returned", "returned: success"), ("type", "type: str")]
    assert record_fields(_unit(units, "timeout"))[-1] == ("default", "default: 120")


@needs_model
def test_the_asked_field_of_the_named_record_answers():
    units = units_of(MODULE, "heron_mirror.py")
    doc = ask("What is the default value of timeout for heron_mirror?", units)
    assert "120" in (doc.answer or "") and doc.result.status == "success", doc.answer
    doc = ask("Which version added the parallel option?", units)
    assert "1.2" in (doc.answer or ""), doc.answer


@needs_model
def test_a_record_that_lists_its_fields_without_the_asked_one_does_not_state_it():
    # `endpoint` lists `type:` and no `default:`; `interval`'s default (a sentence that also says "poll") is
    # another setting's (before: "`interval`: … default: 30.", a weak false answer)
    doc = _over_entries("What is the default endpoint to poll?", "endpoint", "interval")
    assert doc.result.status == "no-context", doc.answer


@needs_model
def test_a_question_that_asks_what_a_record_holds_is_no_field_question():
    units = units_of(MODULE, "heron_mirror.py")
    doc = ask("What does the target return value contain?", units)
    assert "path the mirror was written to" in (doc.answer or ""), doc.answer


@needs_model
def test_a_licence_line_over_the_document_dates_nothing():
    units = units_of(MODULE, "heron_mirror.py")
    doc = ask("Which version added the region option?", units)
    assert "2.1" not in (doc.answer or ""), doc.answer


@needs_model
def test_a_documented_key_marked_in_a_sentence_is_an_option():
    # gs-symbolic over the entries of region and parallel (a retrieval that brings both, as for two options
    # a sentence names together): `parallel` is documented, so O(parallel) names an option
    doc = _over_entries("Which parameter cannot be combined with region?", "region", "parallel")
    assert "O(parallel)" in (doc.answer or ""), doc.answer
    assert marks_documented("Cannot be combined with O(parallel).", frozenset({"parallel"}))
    assert not marks_documented("Copies run in parallel.", frozenset({"parallel"}))


def test_the_documents_own_name_does_not_narrow_the_evidence():
    # the file name's stem names the document: a question that writes it says which document, not which part
    units = [u for u in units_of(MODULE, "heron_mirror.py") if u.kuType == "atomic"]
    pool = split_units(units)
    assert names_document("heron_mirror", units)
    assert about_named("What does heron_mirror do with the region?", pool, []) is None
    # renamed, the same text's identifier is just a name some units write: it narrows as before
    renamed = [u for u in units_of(MODULE, "mirror.py") if u.kuType == "atomic"]
    assert not names_document("heron_mirror", renamed)
    assert about_named("What does heron_mirror do with the region?", split_units(renamed), []) is not None


@needs_model
def test_the_kind_a_question_gives_an_entry_is_said_by_the_entry():
    # "the bucket option": the entry `bucket` is named by its key and classified by the question; the
    # document lists it among its options by layout (the `options:` mapping), never by the word
    units = units_of(MODULE, "heron_mirror.py")
    doc = ask("What does the bucket option do?", units)
    assert "name of the bucket to mirror" in (doc.answer or ""), doc.answer  # refused before
    doc = ask("What does the region option of heron_mirror do?", units)
    assert "receives the copy" in (doc.answer or ""), doc.answer  # the module's header line before


def test_a_release_heading_is_a_short_label():
    assert labels_release("Tessel v2.3 Release Notes")
    assert labels_release("2.3.0 (2021-05-03)")
    assert labels_release("What's New In Python 3.12")
    assert not labels_release(
        "Heron Shared Source Licence v2.1+ (see LICENCE or https://licences.example.org/hssl-2.1.txt)"
    )


def test_the_blank_lines_inside_a_definitions_code_are_kept():
    """Fields get a blank line of their own; the code a definition holds keeps its own blank lines."""
    text = (
        "Hooks\n=====\n\non_build\n   Runs after a build. Define it in hooks.py::\n\n"
        "      def on_build():\n          pass\n\n\n      def helper():\n          pass\n\n"
        "on_clean\n   Runs after a clean.\n"
    )
    claims = [
        u.claim or "" for u in build_tree(text, SourceMeta("s", "hooks.rst", "rst")) if u.kuType == "atomic"
    ]
    assert any("pass\n\n\ndef helper" in c for c in claims), claims
