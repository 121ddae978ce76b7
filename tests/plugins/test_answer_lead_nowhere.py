"""Golden tests of an honest status for a lead-in without what it leads into (issue 20), on a tool's
install guide written here. A sentence ending on a colon ("On Windows, run:") announces the answer; quoted
without the command after it (the guide moved it, or never wrote it) it does not state the answer, though it
repeats the question's words: the best candidate, weak. Quoted with its command it stays `success`. The
colon is written as a period when quoted, so the check reads the sentence, not the quoted text. (A lead-in
followed by a sentence of its own is left alone: what follows a colon may be what it announces.)"""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of

GUIDE = """# brine

brine uploads backups to object storage.

## Environments

To activate the brine environment on Linux, run:

    source brine-env/bin/activate

### Windows

To activate the brine environment on Windows, run:

## Uploads

Uploads are retried three times before brine gives up.
"""

RST_GUIDE = """brine
=====

brine uploads backups to object storage.

Environments
------------

To activate the brine environment on Linux, run::

    source brine-env/bin/activate

Windows
~~~~~~~

To activate the brine environment on Windows, run::
"""


@needs_model
@pytest.mark.parametrize(("text", "name"), [(GUIDE, "guide.md"), (RST_GUIDE, "guide.rst")])
def test_a_lead_in_without_its_command_is_not_success(text: str, name: str) -> None:
    doc = ask("How do I activate the brine environment on Windows?", units_of(text, name))
    assert doc.result.status != "success"
    assert "brine-env" not in doc.answer  # not the other system's command either


@needs_model
@pytest.mark.parametrize(("text", "name"), [(GUIDE, "guide.md"), (RST_GUIDE, "guide.rst")])
def test_a_lead_in_quoted_with_its_command_stays_success(text: str, name: str) -> None:
    doc = ask("How do I activate the brine environment on Linux?", units_of(text, name))
    assert "source brine-env/bin/activate" in doc.answer
    assert doc.result.status == "success"
