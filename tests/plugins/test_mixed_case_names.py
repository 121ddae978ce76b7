"""A word written with a capital inside ("macOS", "iPhone", "chunksSortMode") is a name as much as a capitalised
one (issue 20: `success` that is not true): a question naming it is about it, so a passage about another
platform ("Windows — arm64: Tier 2" for "Which support tier is macOS on arm64?") is no `success`."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.question import analyse, name_runs
from mrpvm.protocol.document import CnlDocument

DOC = """# Tallow platform support

Tallow runs on the platforms below; a tier says how well each one is tested.

## Supported platforms

| Platform | Architectures | Support tier |
|---|---|---|
| Windows | arm64, x64 | Tier 2 |
| Linux | x64 | Tier 1 |
| FreeBSD | x64 | Tier 3 |

## Notes

On macOS the Tallow daemon is started by launchd.
"""


def solve(question: str) -> CnlDocument:
    return ask(question, units_of(DOC, "tallow.md", "tallow"))


def test_a_word_with_an_inner_capital_is_a_name() -> None:
    assert name_runs("Which support tier is macOS on arm64?") == ["macOS"]
    assert name_runs("What does the chunksSortMode option accept?") == ["chunksSortMode"]
    assert name_runs("which tier is it on arm64?") == []
    assert analyse("Which support tier is macOS on arm64?", None).name_terms == {"maco"}


def test_a_row_about_another_platform_is_no_success() -> None:
    doc = solve("Which support tier is macOS on arm64?")
    assert doc.result.status != "success", doc.answer
    named = solve("Which support tier is Windows on arm64?")
    assert named.result.status == "success" and "Tier 2" in named.answer
    assert solve("What starts the Tallow daemon on macOS?").result.status == "success"
