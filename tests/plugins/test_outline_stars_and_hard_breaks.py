"""Ways a document marks structure that sd-symbolic read as plain words (session 22, eval/dev/dev18 and
dev20): the star headings of a file in Emacs outline or Org mode, and CommonMark's backslash hard line break.

A GNU-style NEWS file declares `-*- outline -*-` on its first line; its "* Noteworthy changes in release …"
lines are level-1 headings and its "** Bug fixes" lines level-2 ones, so every entry stands under its
release. Read as bullets, an entry lost its release ("Which release added …?" was answered from another
one). An API reference writes "**OAuth:** …\\" lines, each its own statement; read as one sentence, the
scope, the return type and the version history ran together. A configuration file's manual writes each
setting as "key= description" (dev19): the paragraph is the setting's definition, so a default stated in its
own last sentence stays with it. And "Note that …" points at a fact: a paragraph "Add accounts to the list.
Note that the user must be following them." is no two-step procedure (dev20).
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.sd_symbolic.shared.roles import is_imperative
from mrpvm.plugins.sd_symbolic.source_units.outline_stars import star_mode
from mrpvm.plugins.sdk.text import sentences

NEWS = """Kestrel NEWS                                    -*- outline -*-

* Noteworthy changes in release 2.4 (2024-05-02) [stable]

** Bug fixes

  kestrel sync no longer loses the last line of a file that lacks a
  trailing newline.  [bug introduced in kestrel-2.1]

** New features

  kestrel now accepts the --mirror option, which copies deletions to the
  target as well.


* Noteworthy changes in release 2.3 (2023-11-20) [stable]

** New features

  kestrel now accepts the --dry-run option: it reports what it would copy
  without copying anything.

** Changes in behavior

  The KESTREL_OPTS environment variable is no longer read.


Major changes in Kestrel 1.0 (2019-01-10)

* First public release.
* Copies files over SSH
* Reads ~/.kestrelrc
"""


def _titles(text: str, name: str = "NEWS") -> dict[str, str]:
    """Each atomic unit's first words → its section title."""
    return {
        (u.claim or "")[:30]: u.sectionTitle or ""
        for u in units_of(text, name)
        if u.kuType == "atomic" and u.claim
    }


def test_the_mode_line_is_read_from_the_first_lines_only():
    assert star_mode(NEWS)
    assert star_mode("#!/bin/sh\n# -*- mode: org; coding: utf-8 -*-\n* Heading\n")
    assert not star_mode("Notes\n\n* item one\n* item two\n")
    assert not star_mode("Notes\n\nline\nline\n-*- outline -*- written in the middle\n")


def test_star_lines_of_an_outline_file_are_headings_with_their_level():
    titles = _titles(NEWS)
    dry = next(t for c, t in titles.items() if c.startswith("kestrel now accepts the --dry"))
    assert dry == "Noteworthy changes in release 2.3 (2023-11-20) [stable] > New features"
    opts = next(t for c, t in titles.items() if c.startswith("The KESTREL_OPTS"))
    assert opts.endswith("release 2.3 (2023-11-20) [stable] > Changes in behavior")
    # the bullets of the older entry stay bullets, also the one without a full stop
    old = [t for c, t in titles.items() if "Copies files" in c or "First public" in c]
    assert old and all(t == "Major changes in Kestrel 1.0 (2019-01-10)" for t in old)


def test_without_the_mode_line_star_lines_stay_bullets():
    plain = NEWS.replace("-*- outline -*-", "")
    titles = _titles(plain)
    assert not any(t.startswith("Noteworthy changes") for t in titles.values())


def test_an_entry_is_answered_with_its_own_release():
    units = units_of(NEWS, "NEWS")
    doc = ask("Which kestrel release added the option that reports what it would copy?", units)
    assert "2.3" in doc.answer and "--dry-run" in doc.answer
    assert "2.4" not in doc.answer


API = """## Create a note {#create}

```http
POST /api/v2/notes HTTP/1.1
```

Create a new note.

**Returns:** [Note]({{< relref "entities/note" >}})\\
**OAuth:** User token + `write:notes`\\
**Version history:**\\
1.0.0 - added\\
2.2.0 - added `pinned`

##### Form data parameters

text
: {{<required>}} String. The text of the note.
"""


def test_a_backslash_at_the_end_of_a_line_ends_the_statement():
    assert sentences("**OAuth:** User token + `write:notes`\\\n**Version history:**\\\n1.0.0 - added") == [
        "**OAuth:** User token + `write:notes`",
        "**Version history:**",
        "1.0.0 - added",
    ]
    # a shell command continued after a blank is not a hard break
    assert sentences("Run ./configure \\\n --prefix=/usr first.") == [
        "Run ./configure \\\n --prefix=/usr first."
    ]


def test_hard_broken_lines_are_answered_one_by_one():
    units = units_of(API, "notes.md")
    assert not any("\\" in (u.claim or "") for u in units if u.kuType == "atomic")
    doc = ask("In which version was pinned added?", units)
    assert "2.2.0" in doc.answer
    assert "write:notes" not in doc.answer and "Returns" not in doc.answer


MANUAL = """heronry.conf(5)              File Formats Manual              heronry.conf(5)

NAME
       heronry.conf - heronry daemon configuration file

SECTION [NEST]
       nest-name=  Set  the name the daemon announces on the network. If omitted it
       defaults to the host name.

       nest-retries=  Takes an unsigned integer. The number of times a failed announcement
       is repeated before the daemon gives up on it. Bigger values help on lossy links but
       also increase traffic. Earlier versions repeated every announcement once.
       This option defaults to 4.

       use-multicast=  Takes a boolean value ("yes" or "no"). If set to "no" the daemon
       will only answer unicast queries. Default is "yes".
"""


def test_a_paragraph_opening_with_a_setting_and_equals_is_its_definition():
    units = [u for u in units_of(MANUAL, "heronry.conf.5") if u.kuType == "atomic"]
    retries = [u for u in units if "failed announcement" in (u.claim or "")]
    assert len(retries) == 1
    # the whole description, its default in its own sentence included, stands under the setting
    assert "defaults to 4" in (retries[0].claim or "")
    assert (retries[0].sectionTitle or "").endswith("nest-retries=")
    assert not any((u.claim or "").startswith("This option defaults") for u in units)


def test_a_default_in_its_own_sentence_is_answered_under_its_setting():
    units = units_of(MANUAL, "heronry.conf.5")
    doc = ask("How often is a failed announcement repeated by default?", units)
    assert "4" in doc.answer and "nest-retries" in doc.answer


def test_note_that_states_a_fact_and_is_no_step():
    assert not is_imperative("Note that the user must be following these accounts.")
    assert not is_imperative("Please keep in mind that tokens expire after an hour.")
    assert is_imperative("Note the version number before you upgrade.")
    assert is_imperative("Add accounts to the given list.")
    text = "## Add members\n\nAdd members to the given ring. Note that each member must hold a signed key.\n"
    units = [u for u in units_of(text, "ring.md") if u.kuType == "atomic"]
    assert len(units) == 1 and units[0].role != "Procedure"
    assert "signed key" in (units[0].claim or "")
