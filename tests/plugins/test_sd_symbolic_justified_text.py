"""Plain text justified by a formatter (`man frob > frob.txt`) has runs of two spaces inside sentences;
only lines whose gaps fall at shared columns are a table."""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.outline import parse_outline
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

MAN_PAGE = """FROB(1)                      General Commands Manual                     FROB(1)

OPTIONS
       -w, --wait-limit <fractional seconds>
              Longest  time  in  seconds that frob waits for each spool to
              drain.  This is useful for keeping your night  jobs  from  stalling
              for  hours  when a spool  device  is  jammed.  Since version 2.1,
              this  option  accepts decimal values.

       -s, --size=SIZE
              Set the spool size. SIZE is a number with a suffix:

              Suffix    Units                   Byte Equivalent
              b         Blocks                  SIZE x 512
              K         Kilobytes               SIZE x 1024
              M         Megabytes               SIZE x 1024^2
"""


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(b.kind, text[b.start : b.end]) for b in parse_outline(text)]


def test_justified_paragraph_is_prose_and_the_aligned_table_stays_a_table() -> None:
    blocks = _blocks(MAN_PAGE)
    tables = [body for kind, body in blocks if kind == "table"]
    assert len(tables) == 1 and tables[0].startswith("Suffix") and "Megabytes" in tables[0]
    assert not any("Longest" in body for body in tables)


def test_justified_description_becomes_sentences_under_its_option() -> None:
    meta = SourceMeta("frob-1", "frob.txt", "text", created_at="t0")
    units = build_tree(MAN_PAGE, meta)
    first = next(u for u in units if u.kuType == "atomic" and "Longest" in u.body)
    assert first.unitType != "table"
    assert "Longest time in seconds that frob waits for each spool to drain." in first.body
    assert " — " not in first.body  # no cell joined as a table row
    assert (first.sectionTitle or "").endswith("-w, --wait-limit <fractional seconds>")


def test_a_table_whose_gaps_wander_is_not_one() -> None:
    wandering = "\n".join(
        [
            "  alpha  beta gamma  delta epsilon",
            "  one two  three four  five six seven",
            "  red green blue  cyan  magenta yellow",
            "",
        ]
    )
    assert [kind for kind, _ in _blocks(wandering)] != ["table"]
    aligned = "\n".join(
        [
            "  alpha   beta    gamma",
            "  one     two     three",
            "  red     green   blue",
            "",
        ]
    )
    assert [kind for kind, _ in _blocks(aligned)] == ["table"]


def test_lowercase_terms_whose_descriptions_share_a_column_stay_definitions() -> None:
    text = (
        "PERSONALITY\n"
        "       aix        like the AIX frob\n"
        "       bsd        like the BSD frob (totally non-standard)\n"
        "       hp         like the HP-UX frob\n"
    )
    units = build_tree(text, SourceMeta("frob-2", "frob.txt", "text", created_at="t0"))
    terms = {(u.sectionTitle or "").rsplit(" > ", 1)[-1]: u.body for u in units if u.unitType == "definition"}
    assert terms == {
        "aix": "like the AIX frob",
        "bsd": "like the BSD frob (totally non-standard)",
        "hp": "like the HP-UX frob",
    }


def test_a_word_the_formatter_hyphenated_across_lines_is_joined() -> None:
    text = (
        "OPTIONS\n"
        "       -r, --redirect\n"
        "              Connections are automatically redi\u2010\n"
        "              rected over the spool channel (Debian-spe\u2010\n"
        "              cific).  A command\u2010line flag - like this one - stays.\n"
    )
    units = build_tree(text, SourceMeta("frob-3", "frob.txt", "text", created_at="t0"))
    body = next(u.body for u in units if u.kuType == "atomic" and "Connections" in u.body)
    assert "automatically redirected over the spool channel (Debian-specific)." in body
    assert "command\u2010line flag - like this one - stays" in body
