"""A "which command" question answered by a sentence that names no command takes the code the next unit of
its chunk leads into (issue 20, deliverable 4: a step keeps the command that follows it)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.embedding import available

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

GUIDE = """# Installing Kiln

## Step 1 - Before you start

You must first enable the sandbox feature before installing any plugins on the host.

Open a terminal **as root** and enter this command:

```sh
kilnctl setup --with=jail --all --no-restart
```

## Step 2 - Restart

Restart the host to finish the installation.
"""


def test_the_command_a_sentence_leads_to_is_quoted_with_it():
    doc = ask("What command enables the sandbox feature?", units_of(GUIDE, "install.md"))
    assert "kilnctl setup --with=jail" in doc.answer
    assert "You must first enable the sandbox feature" in doc.answer
    assert doc.result.status == "success"
    assert "Restart the host" not in doc.answer


def test_a_verb_joined_by_a_hyphen_is_a_noun_and_an_option_written_out_is_something_to_do():
    from mrpvm.plugins.gs_symbolic.directives import is_instruction, tells_what_to_do
    from mrpvm.plugins.gs_symbolic.evidence import Sentence
    from mrpvm.protocol.document import KnowledgeUnit

    assert not is_instruction("By default, the pre-commit and commit-msg hooks are run.")
    assert is_instruction("Build the tree, and commit the result.")
    unit = KnowledgeUnit(id="u", sourceId="s", chunkId="c", kuType="atomic", role="Description", topic="t")

    def sentence(text: str) -> Sentence:
        return Sentence(text, unit, [], (0, 0, 0))

    assert tells_what_to_do([sentence("When any of --no-verify or -n is given, these are bypassed.")])
    assert not tells_what_to_do([sentence("By default, the pre-commit and commit-msg hooks are run.")])
