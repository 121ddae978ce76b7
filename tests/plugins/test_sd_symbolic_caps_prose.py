"""sd-symbolic's plain-text reader: an ALL-CAPS line is a heading only when it stands alone.

A licence's disclaimer is often written in capitals and wraps over several lines; a short line of it that
ends in no punctuation ("CONSEQUENTIAL LOSSES (SUCH AS, WITHOUT LIMIT, LOST") looked like a heading, and
every passage after it was read under that false heading. Real capital headings (a man page's NAME, a
title over a capitalised paragraph, INI-like section names) stay headings. Documents invented.
"""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.outline import read_blocks
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

NOTICE = """Quillmark notice file

Quillmark is a ledger formatter.

Terms
 Redistribution of the kettle scripts is allowed in any form.
 .
 THE KETTLE SCRIPTS COME FROM THE GUILD "AS IS" AND ANY PROMISE,
 SPOKEN OR WRITTEN, IS REFUSED.  IN NO CASE WILL THE GUILD
 ANSWER FOR ANY DIRECT, INDIRECT, OR SPECIAL
 CONSEQUENTIAL LOSSES (SUCH AS, WITHOUT LIMIT, LOST
 LEDGERS OR LOST EVENINGS) HOWEVER THEY ARISE, EVEN IF
 WARNED OF SUCH LOSS.

Origin
 The tally module was written by Oren Vasquez in 1991.
"""

TITLED = """ABOUT BRINDLE
Brindle sorts seed packets by sowing month.

WARRANTY
THERE IS NO PROMISE THAT BRINDLE SORTS CORRECTLY. USE IT
AT YOUR OWN RISK.

[MAIN SECTION]
depth = 3
"""


def headings(text: str) -> list[str]:
    return [b.title for b in read_blocks(text) if b.kind == "heading"]


def test_capital_disclaimer_lines_are_prose_not_headings() -> None:
    titles = headings(NOTICE)
    assert not any("LOSSES" in t or "SPECIAL" in t or "GUILD" in t for t in titles), titles


def test_a_passage_after_a_capital_disclaimer_is_not_under_a_false_heading() -> None:
    units = build_tree(NOTICE, SourceMeta("s", "notice.txt", "text"))
    origin = [u for u in units if "Oren Vasquez" in (u.claim or "")]
    assert origin
    assert all("LOSSES" not in (u.sectionTitle or "") for u in origin), [u.sectionTitle for u in origin]


def test_real_capital_headings_stay_headings() -> None:
    titles = headings(TITLED)
    assert "ABOUT BRINDLE" in titles and "WARRANTY" in titles
    assert not any("PROMISE" in t for t in titles)
