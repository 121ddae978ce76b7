"""The entry a list's lead-in asks for (issue 20, answer selection; gs_symbolic/named.py `_led`,
kb_common/lead_context.py):

- an entry of a definition list stands under its lead-in as under a heading: when the lead-in, or the
  paragraph it ends, writes the identifier the question names (`name_format`, `quill_save`), the entries of
  its list are about that identifier too, and the one whose own words answer is chosen (on main only the
  units writing the identifier were kept, so the lead-in or a later paragraph answered, or nothing did);
- a lead-in that ends a paragraph is a unit of its own: the retrieval selects, with the lead-in and an entry
  of its list, the unit the lead-in continues in the same paragraph (which names what "the pattern" is), and
  nothing when a paragraph break stands between them;
- an entry the list does not hold is not invented from the lead-in's words.
The documents are invented."""

from __future__ import annotations

from answer_support import solve_question, units_of
from kb_corpus import retrieve_request
from mrpvm.plugins.kb_common import retriever
from mrpvm.plugins.kb_fast.__main__ import plugin as fast
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import encode_request

PAGE = r""".TH QUILL-NAMES 5 2031-04-02 "quill 2.3" "File Formats"
.SH NAME
quill-names \- how quill names the files it saves
.SH DESCRIPTION
.SS Naming saved files
By default a saved file is named after its first heading, but the
.I name_format
setting in
.I ~/.quillrc
can hold a pattern that is used to build the name instead.
The pattern can contain placeholders which are replaced by the following values when a file is saved:
.TP
%%
A single percent sign.
.TP
%d
Date of the save, as year, month and day.
.TP
%l
Login name of the user who saved the file.
.TP
%n
Number of the revision being saved.
.TP
%w
Width of the widest line, in columns.
.PP
A name longer than 200 bytes is cut at 200 bytes; the
.I name_format
pattern is read again each time a file is saved.
.SS Exit status
The
.B quill_save
command exits with one of these statuses:
.TP
0
The file was saved.
.TP
3
The lock file of the folder is held by another process.
.TP
5
The disk is full.
.PP
A status of
.B quill_save
above 5 is never returned.
"""


def _units(page: str = PAGE) -> list[KnowledgeUnit]:
    return units_of(page, "quill-names.5")


def _selected(question: str, units: list[KnowledgeUnit]) -> list[str]:
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    doc, failure, _ = fast.run(encode_request(retrieve_request([group], units)))
    assert doc is not None, failure
    return [i.split("::", 1)[1] for i in doc.resolved[0].selected]


def test_the_placeholder_whose_description_answers_is_chosen() -> None:
    # main: refused (only the paragraphs writing name_format were kept, and neither states a login)
    doc = solve_question("Which name_format placeholder inserts the login name?", _units())
    assert doc.result.status != "no-context"
    assert "%l" in doc.answer and "Login name" in doc.answer


def test_a_placeholder_named_in_the_question_is_read_under_its_lead_in() -> None:
    # main: the later paragraph that writes name_format ("A name longer than 200 bytes …") as a `success`
    doc = solve_question("What does %w stand for in a name_format pattern?", _units())
    assert "Width of the widest line" in doc.answer
    assert "200 bytes" not in doc.answer


def test_the_exit_status_whose_description_answers_is_chosen() -> None:
    # main: the lead-in "The quill_save command exits with one of these statuses." (weak)
    doc = solve_question(
        "Which quill_save exit status means that another process holds the lock file?", _units()
    )
    assert doc.result.status == "success"
    assert "`3`" in doc.answer and "lock file" in doc.answer


def test_an_entry_the_list_does_not_hold_stays_unanswered() -> None:
    doc = solve_question("Which name_format placeholder inserts the host's domain name?", _units())
    assert doc.result.status != "success"
    assert "%" not in doc.answer


def test_the_paragraph_a_lead_in_ends_is_selected_with_it() -> None:
    # main: the lead-in and the %l entry only; the paragraph that names name_format was left out
    selected = _selected("Which name_format placeholder inserts the login name?", _units())
    assert {"chunk-002::unit-001", "chunk-002::unit-004"} <= set(selected)
    assert "chunk-002::unit-000" in selected


def test_no_paragraph_is_added_across_a_paragraph_break(monkeypatch) -> None:
    broken = _units(
        PAGE.replace(
            "can hold a pattern that is used to build the name instead.\n",
            "can hold a pattern that is used to build the name instead.\n.PP\n",
        )
    )
    question = "Which name_format placeholder inserts the login name?"
    with_context = _selected(question, broken)
    monkeypatch.setattr(retriever, "with_lead_context", lambda selected, views: selected)
    assert with_context == _selected(question, broken)
