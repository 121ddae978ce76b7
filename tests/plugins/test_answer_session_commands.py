"""A command quoted after the sentence that leads into it keeps the commands of its terminal session and
drops what the machine printed (issue 20: answers too long, a tutorial's shell session output kept)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.render import session_commands
from mrpvm.plugins.sdk.embedding import available

GUIDE = """# Working with Quarry

## Pinning a crate

You can pin a crate to an exact release by giving its name followed by ``@`` and the release number:

```
(work) $ quarry fetch lantern@3.1.4
Resolving lantern@3.1.4
Downloading lantern-3.1.4.qz (812 kB)
Unpacking lantern-3.1.4.qz into the local depot
Pinned lantern at 3.1.4
```

## Listing crates

``quarry list`` shows every crate in the depot with its release.
"""


def test_a_session_keeps_its_commands_and_drops_their_output():
    session = "$ quarry fetch lantern \\\n    --depot ./d\nResolving lantern\n$ quarry list\nlantern 3.1.4"
    assert session_commands(session) == "$ quarry fetch lantern \\\n    --depot ./d\n$ quarry list"
    powershell = "PS C:\\> quarry fetch lantern\nResolving lantern"
    assert session_commands(powershell) == "PS C:\\> quarry fetch lantern"


def test_code_without_prompts_or_without_output_is_kept_whole():
    script = "quarry fetch lantern\nquarry list"
    assert session_commands(script) == script
    only_commands = "$ quarry fetch lantern\n$ quarry list"
    assert session_commands(only_commands) == only_commands
    prices = "5$ per crate\n10% off"  # a figure with a currency or percent sign is no prompt
    assert session_commands(prices) == prices


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_the_command_a_step_leads_into_is_quoted_without_its_output():
    doc = ask("Which command pins a crate to an exact release?", units_of(GUIDE, "quarry.md"))
    assert "quarry fetch lantern@3.1.4" in doc.answer
    assert "Downloading lantern" not in doc.answer
    assert "Pinned lantern at 3.1.4" not in doc.answer
