"""sd-symbolic reads a raw HTML document as its rendered page shows it (issue 20 item 4): headings are the
section tree, entities are decoded, tags are no text, a dt and its dd are one definition, a table's rows are
rows, a pre is code, and what a page does not show (script, style, nav) is left out; the units' offsets
still slice the source. Documents invented; a Markdown page with a few tags in it keeps its reader, and
malformed or adversarial HTML neither fails nor takes quadratic time.
"""

from __future__ import annotations

import html
import re

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.html_page import read_page
from mrpvm.plugins.sd_symbolic.source_units.html_shape import _OPENER, looks_like_html, parseable
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from reader_units import atomic_units, unit_holding

APIARY = """<!DOCTYPE html>
<html lang="en">
<head>
<title>Larkmoor Apiary Handbook</title>
<style>p { margin: 0 } .hive { color: #a80 }</style>
<script>var visits = 0; if (visits < 3) { document.title = "Welcome back"; }</script>
</head>
<body>
<nav><a href="/">Home</a> | <a href="/shop">Shop the honey store</a></nav>
<h1>Larkmoor Apiary Handbook</h1>
<p>This handbook tells volunteers how the <code>Larkmoor</code> hives are
kept through the year. Ask the <a href="/warden">hive warden</a> before
opening any hive.</p>

<h2>Inspections</h2>
<p>A hive is inspected when its entrance count is <code>Hive&gt;=3</code>
foragers per minute &amp; the air is above 14&nbsp;&deg;C.</p>
<ol>
<li>Light the smoker with dry pine needles.</li>
<li>Lift the crown board slowly.</li>
<li>Check two frames for <em>eggs</em>.</li>
</ol>

<h3>Winter feeding</h3>
<p>In winter the bees get fondant, never syrup.</p>
<dl>
<dt>Fondant block</dt>
<dd>A 2&nbsp;kg slab placed over the feed hole in November.</dd>
<dt>Candy board</dt>
<dd>A wooden frame of hard sugar used only after a wet autumn.</dd>
</dl>

<h2>Equipment</h2>
<table>
<tr><th>Part</th><th>Weight</th><th>Kept in</th></tr>
<tr><td>Brood box</td><td>9 kg</td><td>the blue shed</td></tr>
<tr><td>Queen excluder</td><td>0.4 kg</td><td>the <b>tool chest</b></td></tr>
</table>
<p>The swarm log is a script:</p>
<pre>
if count &lt; 20:
    print("weak colony")
</pre>
<footer><p>Written by the Larkmoor volunteers.</p></footer>
</body>
</html>
"""

_TAG = re.compile(r"<[^>]*>")


def _units(text: str) -> list:
    return atomic_units(text, "page")


_holding = unit_holding


def _shown(source: str) -> str:
    """What a slice of the source shows, roughly: tags dropped, entities decoded, blanks collapsed."""
    return " ".join(html.unescape(_TAG.sub(" ", source)).split())


def test_a_document_and_a_fragment_look_like_html() -> None:
    assert looks_like_html(APIARY)
    assert looks_like_html(
        "\ufeff<?xml version='1.0'?>\n<!-- saved page -->\n<html><body><p>x</p></body></html>"
    )
    fragment = "\n\n".join(f"<h2>Hive {k}</h2>\n<p>Hive {k} is kept by the east wall.</p>" for k in range(6))
    assert looks_like_html(fragment)


def test_markdown_with_a_few_tags_keeps_its_reader() -> None:
    markdown = """<p align="center"><img src="logo.png" alt="Larkmoor"></p>

# Larkmoor hive tools

Press <kbd>Ctrl</kbd>+<kbd>S</kbd> to save a hive record.<br>
The log lives in `hives/`.

<details><summary>Older releases</summary>

- 1.2 added the swarm log
- 1.1 added <b>queen</b> records

</details>

## Install

Run `pip install larkmoor` and open <http://localhost:8080>.
"""
    assert not looks_like_html(markdown)
    assert not looks_like_html("If a < b and b > c then a < c.\n\nThe <angle> words are plain text here.\n")
    units = _units(markdown)
    assert any(u.sectionTitle == "Larkmoor hive tools" for u in units)


def test_entities_are_decoded_and_tags_are_no_text() -> None:
    units = _units(APIARY)
    inspected = _holding(units, "Hive>=3 foragers per minute & the air is above 14")
    assert (inspected.claim or "").endswith("°C.")
    assert inspected.sectionTitle == "Larkmoor Apiary Handbook > Inspections"
    for unit in units:
        for text in (unit.claim, unit.textBody, unit.procedure, unit.title):
            assert not re.search(r"</?[a-z]+[ >]|&[a-z]+;", text or ""), text


def test_what_the_page_does_not_show_is_left_out() -> None:
    units = build_tree(APIARY, SourceMeta("s", "page", "text"))
    everything = " ".join(" ".join(filter(None, (u.claim, u.textBody, u.title, u.topic))) for u in units)
    for hidden in ("visits", "margin", "Shop the honey store", "Welcome back"):
        assert hidden not in everything, hidden


def test_headings_are_the_section_tree() -> None:
    units = _units(APIARY)
    fondant = _holding(units, "fondant, never syrup")
    assert fondant.sectionTitle == "Larkmoor Apiary Handbook > Inspections > Winter feeding"
    brood = _holding(units, "Brood box")
    assert brood.sectionTitle == "Larkmoor Apiary Handbook > Equipment"


def test_a_term_and_its_description_are_one_definition() -> None:
    units = _units(APIARY)
    block = _holding(units, "placed over the feed hole in November")
    assert block.title == "Fondant block" and block.unitType == "definition"
    assert "Candy board" not in (block.claim or "")
    candy = _holding(units, "hard sugar used only after a wet autumn")
    assert candy.title == "Candy board"


def test_list_items_table_rows_and_code() -> None:
    units = _units(APIARY)
    steps = _holding(units, "Lift the crown board slowly.")
    text = steps.procedure or steps.claim or ""
    assert "1. Light the smoker" in text and "3. Check two frames for eggs." in text
    table = _holding(units, "| Queen excluder | 0.4 kg | the tool chest |")
    assert table.chunkType == "table"
    code = _holding(units, 'if count < 20:\n    print("weak colony")')
    assert code.chunkType == "code" and code.sectionTitle == "Larkmoor Apiary Handbook > Equipment"


def test_offsets_slice_the_source() -> None:
    units = _units(APIARY)
    for unit in units:
        assert unit.charStart is not None and unit.charEnd is not None
        piece = APIARY[unit.charStart : unit.charEnd]
        if unit.unitType in ("sentence", "sentence-group", "fact"):
            assert " ".join((unit.claim or "").split()) in _shown(piece), (unit.claim, piece)
    inspected = _holding(units, "Hive>=3")
    assert APIARY[inspected.charStart : inspected.charEnd].startswith("A hive is inspected")
    assert APIARY[inspected.charStart : inspected.charEnd].endswith("&deg;C.")
    # the units stay in the source's order
    starts = [u.charStart for u in units]
    assert starts == sorted(starts)


def test_unclosed_elements_end_where_a_browser_ends_them() -> None:
    page = read_page(
        "<!doctype html><body><h2>Frames</h2><p>First paragraph.<p>Second paragraph."
        "<ul><li>wax<li>wire</ul><table><tr><td>a<td>b<tr><td>c<td>d</table>"
        "<dl><dt>Super<dd>The box above the brood box.</dl>"
    )
    kinds = [b.kind for b in page.blocks]
    assert kinds == ["heading", "paragraph", "paragraph", "list", "table", "definition"], kinds
    rows = [seg.cells for seg in page.blocks[4].segments]
    assert rows == [["a", "b"], ["c", "d"]]
    items = [page.text[s.body_start : s.end] for s in page.blocks[3].segments]
    assert items == ["wax", "wire"]


def test_stray_angle_brackets_and_ampersands_are_text() -> None:
    page = read_page("<!doctype html><body><p>Keep a<b and c<d apart & test x &lt; y &bogus; &#65;.</p>")
    assert page.text == "Keep a<b and c<d apart & test x < y &bogus; A."


def test_an_unclosed_comment_hides_the_rest() -> None:
    page = read_page("<!doctype html><body><p>Shown.</p><!-- hidden <p>Not shown.</p>")
    assert page.text == "Shown."


def test_huge_and_deep_inputs_read_in_one_pass() -> None:
    huge = "<!doctype html><body><p title='" + "x" * 1_000_000 + "'>Short text.</p>"
    assert read_page(huge).text == "Short text."
    nested = "<!doctype html><body>" + "<div>" * 200_000 + "Deep text." + "</div>" * 10
    assert read_page(nested).text == "Deep text."
    stray = "<!doctype html><body><p>" + "a<b " * 250_000
    page = read_page(stray)
    assert page.text.startswith("a<b a<b") and len(page.blocks) == 1


def test_every_construct_the_parser_is_given_ends_before_the_next() -> None:
    # html.parser searches a tag's end from each `<` that may open one: with every opener's `>` before the
    # next opener, the searches never overlap (linear), whatever the source
    for source in (
        "<!doctype html><p>" + "x<y z " * 1000 + "<b>bold</b> <i>it",
        "<!doctype html><p>" + "</ <!x <?y " * 500,
        "<!doctype html><p>" + "<a " * 500 + ">",
    ):
        copy, end = parseable(source)
        assert len(copy) == end == len(source) and "&" not in copy
        opens = [m.start() for m in _OPENER.finditer(copy)]
        for i, nxt in zip(opens, [*opens[1:], len(copy)], strict=True):
            assert 0 <= copy.find(">", i) < nxt, copy[i : i + 20]


def test_an_html_page_s_offsets_stay_in_the_chunk() -> None:
    meta = SourceMeta("s", "page", "text", chunk_base=3, char_offset=5000)
    units = build_tree(APIARY, meta)
    assert all(5000 <= (u.charStart or 0) <= (u.charEnd or 0) <= 5000 + len(APIARY) for u in units)
