"""A "What does X do?" question over a manual is answered by the first sentence of X's own entry, not by a sentence of
another entry that mentions X (issue 20: "What does --max-time do?" was answered "See also
--no-keepalive and -m, --max-time.")."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.embedding import available

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

MANUAL = """SPOOLCTL(1)                  General Commands Manual                 SPOOLCTL(1)

NAME
       spoolctl - drive a print spool

OPTIONS
       -k, --keep-time <seconds>
              How long a finished job stays in the spool before it is
              purged. Jobs that failed are kept twice as long.

              See also --no-keep and -w, --wait-limit.

       -w, --wait-limit <fractional seconds>
              Longest time in seconds that you allow each job to wait for a
              free printer. This is useful for keeping night batches from
              stalling when a printer is jammed.

              If -w, --wait-limit is provided several times, the last value
              is used.

       -y, --speed-floor <pages>
              Pages per minute under which a printer counts as jammed.

              See also -k, --keep-time and -w, --wait-limit.
"""

CONFIG = """SPOOL_CONFIG(5)              File Formats Manual              SPOOL_CONFIG(5)

DESCRIPTION
     PingCountMax
             Sets how many pings may go unanswered before spoold drops the
             printer. The default value is 3.

     PingInterval
             Sets a timeout interval in seconds after which, if the printer
             has sent nothing, spoold sends it a ping. The default is 0,
             meaning no pings are sent. KeepPings and PingTimer are
             compatibility aliases for this option.

     TrayOrder
             Specifies the order in which trays are tried. As such, you
             probably want the PingInterval option as well.
"""


def test_an_option_is_described_by_the_lead_sentence_of_its_entry():
    doc = ask("What does --wait-limit do?", units_of(MANUAL, "spoolctl.txt"))
    assert "Longest time in seconds that you allow each job to wait" in doc.answer
    assert "See also" not in doc.answer


def test_a_keyword_is_described_by_its_entry_not_by_a_mention_or_an_alias_note():
    doc = ask("What does PingInterval do?", units_of(CONFIG, "spool_config.txt"))
    assert "Sets a timeout interval in seconds" in doc.answer
    assert "aliases" not in doc.answer and "As such" not in doc.answer


MENTIONS_ONLY = """SPOOLCTL(1)                  General Commands Manual                 SPOOLCTL(1)

OPTIONS
       -k, --keep-time <seconds>
              How long a finished job stays in the spool before it is
              purged. Jobs that failed are kept twice as long.

              See also --no-keep and -w, --wait-limit.

       -y, --speed-floor <pages>
              Pages per minute under which a printer counts as jammed.

              See also -k, --keep-time and -w, --wait-limit.
"""


def test_a_sentence_that_only_mentions_the_option_is_not_a_success():
    doc = ask("What does --wait-limit do?", units_of(MENTIONS_ONLY, "spoolctl.txt"))
    assert doc.result.status != "success"
