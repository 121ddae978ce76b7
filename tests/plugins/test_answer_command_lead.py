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
