"""A question about a command-line option that no evidence sentence writes out is refused: an option is an
identifier no other word stands in for (issue 20: an unanswerable question refused despite word overlap)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.answer_shapes import options_named
from mrpvm.plugins.sdk.embedding import available
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

CHANGELOG = """# Changelog of burrow

## v3.2.0

- Results are now sorted by name when `--order` is given, see #212.
- The `--depth` option accepts a range such as `2..4`.

## v3.1.0

- A new `--hidden` flag includes hidden files in the search results.
"""


def test_options_named_reads_each_option_once_in_order():
    assert options_named("Does --sort or -x imply --sort?") == ["--sort", "-x"]
    assert options_named("What does a well-known e-mail header mean?") == []


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_an_option_the_documents_never_write_is_refused_and_a_written_one_is_answered():
    units = units_of(CHANGELOG, "CHANGELOG.md")
    missing = ask("Which burrow release added a --sort option to sort results by name?", units)
    assert missing.answer == NO_CONTEXT_ANSWER
    held = ask(
        "Which burrow release added a --hidden flag to include hidden files in the search results?", units
    )
    assert "3.1.0" in held.answer and "--hidden" in held.answer
