""" "Which command …" is answered by the window that writes a command beyond the question's own words, not by a
sibling sentence that quotes the question's terms back ("the `.crate` bundles"); a lead-in that announces
"the following command" is quoted with the command it announces, even when it explains a placeholder in
code (issue 20: the sentence that holds the command is not the one quoted)."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.answer_form import announces_command

HARBOR = """# Harbor package manager

## Downloading bundles

Fetching from the mirror causes the `.crate` or `.cratepack` bundles to download to a folder of your choosing.
If you prefer, you can also download bundles with the shell, using the mirror's web address.

## Installing a downloaded bundle

Once the bundle has been downloaded, open the folder holding the download and run the following command in that folder, where `bundle-name` is the name of the `.crate` file.

```
harbor-unpack --register .\\bundle-name.crate
```

## Removing bundles

Bundles are removed with the harbor shell as well.
"""


def test_which_command_quotes_the_command_not_the_sentence_repeating_the_question() -> None:
    doc = ask("Which shell command installs a downloaded .crate bundle?", units_of(HARBOR))
    assert "harbor-unpack" in doc.answer


def test_an_announced_command_is_a_lead_in_whatever_it_writes_in_code() -> None:
    assert announces_command("run the following command in that folder, where `bundle-name` is the name")
    assert announces_command("Enter this command to start it.")
    assert not announces_command("This command is deprecated.")  # it points back
    assert not announces_command("Run `harbor-unpack` to install it.")


KILN = """# Kiln firmware tools

## Firmware images

Downloaded `.kfw` firmware images are installed from the shell: the shell command installs one downloaded image at a time, and a kiln accepts a new image only while it is cold.

## Installing a downloaded image from the shell

Flashing takes about a minute; the kiln restarts when it is done.

```
kiln-flash --verify firmware.kfw
```

The kiln keeps the previous image until the new one has been verified.
"""


def test_a_sentence_quoting_the_question_back_loses_to_the_command() -> None:
    """The first sentence states every word of the question and no command (`.kfw` is the question's own);
    the code block states the command."""
    doc = ask("Which shell command installs a downloaded .kfw firmware image?", units_of(KILN))
    assert "kiln-flash" in doc.answer
