"""An annotated configuration file is read as settings and the comments above them (issue 20: `#` comment
lines of a config file were read as Markdown headings, so no description stood with its setting)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sd_symbolic.source_units.config_file import config_blocks, looks_like_config
from mrpvm.plugins.sd_symbolic.source_units.pieces import make_piece
from mrpvm.plugins.sdk.embedding import available

CONFIG = """#
# /etc/kiln.conf - settings of the kiln daemon.
#
# Lines beginning with "#" are comments.

#
# Directory where the kiln keeps its spool files, relative to the
# state directory when not absolute.
#
SPOOL_DIR   /var/spool/kiln
#SPOOL_FILE .kiln

#
# Firing limits:
#   FIRE_MAX_MINUTES  Longest time a firing may run, in minutes.
#   FIRE_MIN_MINUTES  Shortest time a firing may run, in minutes.
#
FIRE_MAX_MINUTES  720
FIRE_MIN_MINUTES  15

#
# Enable logging of every firing to the journal.
#
LOG_FIRINGS yes
"""

README = """# Kiln

Kiln fires pottery on a schedule.

## Install

Run the installer and restart the host.
"""


def test_a_config_file_is_told_from_markdown_and_from_a_script():
    assert looks_like_config(CONFIG)
    assert not looks_like_config(README)
    assert not looks_like_config("#!/bin/sh\n# start the kiln\nkilnctl start --now\necho started\nexit 0\n")


def _definitions(text: str) -> dict[str, list[str]]:
    return {
        b.title: [make_piece(text, s).clean for s in b.segments if s.kind != "term"]
        for b in config_blocks(text)
        if b.kind == "definition"
    }


def test_a_setting_is_described_by_the_comment_above_it_without_comment_marks():
    found = _definitions(CONFIG)
    assert list(found) == [
        "SPOOL_DIR /var/spool/kiln; SPOOL_FILE .kiln",  # a commented-out setting is one too
        "FIRE_MAX_MINUTES 720; FIRE_MIN_MINUTES 15",  # consecutive settings under one comment: one entry
        "LOG_FIRINGS yes",
    ]
    spool = " ".join(found["SPOOL_DIR /var/spool/kiln; SPOOL_FILE .kiln"])
    assert spool.startswith("Directory where the kiln keeps its spool files")
    assert "#" not in spool
    assert found["LOG_FIRINGS yes"] == ["Enable logging of every firing to the journal."]
    header = [b for b in config_blocks(CONFIG) if b.kind == "paragraph"]
    assert len(header) == 1  # the file's header: no setting follows it


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_a_question_about_a_setting_is_answered_with_its_value():
    doc = ask("Where does the kiln keep its spool files?", units_of(CONFIG, "kiln.conf"))
    assert "/var/spool/kiln" in doc.answer
    assert doc.result.status == "success"
    doc = ask("How many minutes is the longest time a firing may run?", units_of(CONFIG, "kiln.conf"))
    assert "720" in doc.answer


GLAZES = """#
# Glaze used for the next firing.
#
# If set to CELADON, a celadon glaze will be used for the ware
# If set to SHINO, a shino glaze will be used for the ware
# If set to TENMOKU, a tenmoku glaze will be used for the ware (default)
# Note: the glaze must match the
# clay body of the ware.
#
GLAZE_METHOD SHINO

LOG_FIRINGS yes
KILN_NAME west
"""


def test_comment_lines_without_a_full_stop_are_statements_of_their_own():
    # before: the three "If set to …" lines read as one 180-character sentence
    unit = next(u for u in units_of(GLAZES, "kiln.conf") if u.title == "GLAZE_METHOD SHINO")
    lines = (unit.claim or "").split("\n")
    assert "If set to SHINO, a shino glaze will be used for the ware" in lines
    # a wrapped sentence (a line ending in "the") stays whole
    assert "Note: the glaze must match the clay body of the ware." in lines


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_the_comment_line_that_answers_is_quoted_alone():
    doc = ask("Which glaze is used when the method is set to TENMOKU?", units_of(GLAZES, "kiln.conf"))
    assert "tenmoku glaze" in doc.answer, doc.answer
    assert "celadon" not in doc.answer and "shino glaze" not in doc.answer, doc.answer
