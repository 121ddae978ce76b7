"""An honest status when the evidence reads two ways (issue 20 item 2), on a document written here.

- A question asking for a value of a shape (a path, a version, a figure) whose best passage has a near-tied
  rival in another section writing another value of that shape: which one is meant is not settled, so the
  answer is the best candidate (weak), not `success`. One section stating the value stays `success`, and so
  does a rival that writes the same value.
- A quote that ends on a lead-in written without its colon ("… will look like"): what it announces is not
  quoted, so not `success` (as a lead-in ending on a colon already was not).
- A Yes/No answered from a general statement whose next sentence opens an exception ("however") naming the
  asked case: the rule is not the answer for that case, so not `success`. A question the exception does not
  name is still answered `success` by the rule.
"""

from __future__ import annotations

from answer_support import ask, sentence_of, units_of
from mrpvm.plugins.gs_symbolic.ambiguity import excepted
from mrpvm.plugins.sdk.typed_spans import typed_spans
from mrpvm.protocol.document import CnlDocument

LOAM = """# The loam seed ledger

loam keeps a ledger of the seeds a nursery holds and of the trays they are sown in.

## Installing

The loam package installs the `loam` command and its handbook.
The package places a copy of the loam handbook in /usr/share/doc/loam/handbook.txt for every user.

## Building from source

A copy of the loam handbook is in the file ./HANDBOOK of the source tree.

## The cache

The tray cache of loam is kept in /var/cache/loam/trays between runs.

## The `meta` table

loam by default will warn about unused keys in `loam.toml` to help in catching typing mistakes. The
`tool.meta` table, however, is completely ignored by loam and will not be warned about. Other tools may keep
their settings there.

## Hooks

A hook is a script loam runs after a tray is sown. If a hook fails, loam reports it on standard error.
For example, if the sow hook exits with status 2, the reported line will look like

    loam: hook sow failed (exit 2)

The tray is still recorded as sown.
"""


def _ask(question: str) -> CnlDocument:
    """kb-balanced's retrieval over the document, then gs-symbolic's answer."""
    return ask(question, units_of(LOAM, "loam.md"))


def test_two_sections_giving_two_paths_for_one_asked_place_are_not_success() -> None:
    # main: `success`, one of the two files quoted as if it were the only one
    doc = _ask("Where is a copy of the loam handbook?")
    assert doc.result.status != "success"
    assert "another section states" in (doc.result.evidence or "")


def test_one_section_stating_the_asked_place_stays_success() -> None:
    doc = _ask("Where is the tray cache of loam kept?")
    assert doc.result.status == "success"
    assert "/var/cache/loam/trays" in (doc.answer or "")


def test_an_exception_naming_the_asked_case_after_a_yes_no_rule_is_not_success() -> None:
    # main: "Yes. loam warns about unknown keys …", `success`, while the next sentence exempts the table
    doc = _ask("Does loam warn about keys in the meta table?")
    assert doc.result.status != "success"


def test_a_yes_no_rule_whose_exception_names_another_case_stays_success() -> None:
    doc = _ask("Does loam warn about unused keys in loam.toml?")
    assert doc.result.status == "success"
    assert (doc.answer or "").startswith("Yes")


def test_a_quote_left_without_the_object_its_last_word_takes_is_not_success() -> None:
    # main: "… the reported line will look like." quoted as the answer, `success`; the block it announces
    # stands after it, unquoted
    doc = _ask("What does the reported line look like when a hook fails?")
    assert doc.result.status != "success"


def test_the_values_of_a_shape_are_read_whole() -> None:
    assert typed_spans("see /usr/share/doc/loam/handbook.txt or ~/.loam/", "location") == frozenset(
        {"/usr/share/doc/loam/handbook.txt", "~/.loam/"}
    )
    assert typed_spans("added in version 2.1, kept until v3", "version") == frozenset({"2.1", "3"})
    assert typed_spans("a tray holds 24 or 1,000 seeds", "number") == frozenset({"24", "1,000"})
    assert typed_spans("any text at all", "entity") == frozenset()


def test_an_exception_must_follow_in_the_paragraph_and_name_an_asked_word() -> None:
    rule = sentence_of("loam warns about unknown keys.")
    after = sentence_of("The extras table, however, is ignored.")
    after.order = (0, 0, 1)
    plain = sentence_of("The extras table is ignored.")
    plain.order = (0, 0, 1)
    assert excepted(rule, [rule, after], {"extra", "warn"})
    assert not excepted(rule, [rule, plain], {"extra", "warn"})  # no contrast: another fact, not an exception
    assert not excepted(rule, [rule, after], {"warn", "key"})  # the exception names nothing asked
