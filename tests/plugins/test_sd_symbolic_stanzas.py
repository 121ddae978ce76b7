"""sd-symbolic reads a stanza file (RFC 822 style: `Field: value` lines, indented continuation lines, ` .` for
an empty line, stanzas apart at blank lines) stanza by stanza: each stanza is a section headed by its first
field, a field's continuation text stays with the field, and a later stanza never stands under an earlier
one's heading (issue 20 item 4). Documents invented; shapes that only look alike (a program's help text, a
YAML file, an email) keep their readers.
"""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.source_units.outline import read_blocks
from mrpvm.plugins.sd_symbolic.source_units.stanzas import looks_like_stanzas
from reader_units import atomic_units

SEEDS = """Registry: fenwick-seed-bank
Upstream-Contact: Ilse Marrow <ilse@fenwick.invalid>
Comment:
 Seeds collected by the Fenwick allotment society.
 .
 The records are checked every spring.

Packet: ruby-tomato
Grower: Ada Pell
Sowing: March, indoors
Note: Needs a warm sill.
 Germination takes ten days at room temperature.
 .
 1. Soak the seeds overnight in weak tea.
 2. Sow them no deeper than a fingernail.

Packet: azure-bean
Grower: Tomas Reyes
        Bea Lund
Sowing: May, outdoors

Sowing: March, indoors
 Seeds sown in March are started under glass on a warm windowsill and moved
 to the greenhouse once their first true leaves appear.
"""


def _units(text: str, name: str = "seeds.txt") -> list:
    return atomic_units(text, name)


def test_every_stanza_is_a_section_headed_by_its_first_field() -> None:
    assert looks_like_stanzas(SEEDS)
    titles = [b.title for b in read_blocks(SEEDS) if b.kind == "heading"]
    assert titles == [
        "Registry: fenwick-seed-bank",
        "Packet: ruby-tomato",
        "Packet: azure-bean",
        "Sowing: March, indoors",
    ]


def test_a_field_keeps_its_continuation_and_its_stanza() -> None:
    units = _units(SEEDS)
    note = [u for u in units if "Germination takes ten days" in (u.claim or "")]
    assert note and "Needs a warm sill" in (note[0].claim or ""), [u.claim for u in note]
    assert note[0].sectionTitle == "Packet: ruby-tomato"
    growers = [u for u in units if "Bea Lund" in (u.claim or "")]
    assert growers and growers[0].sectionTitle == "Packet: azure-bean"
    assert "Tomas Reyes" in (growers[0].claim or "")  # values aligned under the first: one statement
    # the last stanza's text is under its own heading, not under the packet before it
    glass = [u for u in units if "under glass" in (u.claim or "")]
    assert glass and glass[0].sectionTitle == "Sowing: March, indoors"


def test_a_dot_line_parts_paragraphs_and_is_no_sentence() -> None:
    units = _units(SEEDS)
    assert not any((u.claim or "").strip().endswith(" .") for u in units)
    steps = [u for u in units if "Soak the seeds overnight" in (u.claim or u.procedure or "")]
    assert steps and steps[0].sectionTitle == "Packet: ruby-tomato"


HELP = """Usage: brindle [OPTIONS] FILE
Version: 1.2

Author: Ada Pell
Homepage: https://brindle.invalid

Options:
  -m, --month N   only packets sown in month N
  -r, --reverse   latest month first

Commands:
  list   show the packets
  add    add a packet
"""

YAML = """name: brindle
version: 1.2

options:
  month:
    type: int
  reverse:
    type: bool
"""

EMAIL = """From: Ada Pell <ada@fenwick.invalid>
To: Ilse Marrow <ilse@fenwick.invalid>
Subject: tomato seeds

Dear Ilse, the ruby tomatoes came up after ten days.
"""


def test_shapes_that_only_look_alike_are_not_stanza_files() -> None:
    for text in (HELP, YAML, EMAIL):
        assert not looks_like_stanzas(text), text[:30]


def test_the_field_a_question_names_answers_it() -> None:
    from answer_support import ask, units_of

    doc = ask("Who is the upstream contact of the seed bank?", units_of(SEEDS, "seeds.txt"))
    assert doc.answer is not None and "Ilse Marrow" in doc.answer, doc.answer
    assert doc.result.status == "success", doc.result
