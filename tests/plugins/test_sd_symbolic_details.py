"""A disclosure element, `<details><summary>Question</summary>answer …</details>`, is one entry: its summary
the term, what it discloses the text — in a raw HTML page and in a Markdown page that writes the element as
raw HTML alike (details.py, one home for both readers). A page's <title> is its heading when it has no h1.
Documents invented; bad input (unclosed, nested 10,000 deep, a summary outside any details, a 1 MB title or
summary) builds, and the structure read from it is counted.
"""

from __future__ import annotations

import html

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.details import markdown_disclosures
from mrpvm.plugins.sd_symbolic.source_units.html_page import read_page
from mrpvm.plugins.sd_symbolic.source_units.outline import read_source
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

ENTRIES = [
    ("How often does the kiln log its temperature?", "The kiln logs its temperature every forty seconds."),
    ("Why does the glaze crawl?", "Dust on the bisque stops the glaze from wetting it. Wipe each pot first."),
    ("Can the door be opened at 300 degrees?", "No. Wait until the pyrometer reads below 120 degrees."),
]

HTML_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>Fernhollow Kiln Notes</title>"
    '<meta name="keywords" content="pottery kiln glaze cones"></head>\n<body>\n'
    "<h1>Fernhollow Kiln</h1>\n<p>The studio kiln fires stoneware to cone six.</p>\n<h2>Questions</h2>\n"
    + "".join(
        f"<details>\n<summary>{html.escape(q)}</summary>\n<p>{html.escape(a)}</p>\n</details>\n"
        for q, a in ENTRIES
    )
    + "<h2>Loading</h2>\n<p>Load the tallest pots on the bottom shelf.</p>\n</body></html>\n"
)

MARKDOWN_PAGE = (
    "# Fernhollow Kiln\n\nThe studio kiln fires stoneware to cone six.\n\n## Questions\n\n"
    + f"<details>\n<summary>{ENTRIES[0][0]}</summary>\n\n{ENTRIES[0][1]}\n\n</details>\n\n"
    + f"<details><summary>{ENTRIES[1][0]}</summary>\n{ENTRIES[1][1]}\n</details>\n"
    + f"<details>\n  <summary><b>{ENTRIES[2][0]}</b></summary>\n\n{ENTRIES[2][1]}\n</details>\n\n"
    + "## Loading\n\nLoad the tallest pots on the bottom shelf.\n"
)


def _atomic(text: str):
    return [u for u in build_tree(text, SourceMeta("s", "page", "text")) if u.kuType == "atomic"]


def _said(unit) -> str:
    return unit.claim or unit.procedure or ""


def _entry_units(units):
    return {u.title: _said(u) for u in units if u.unitType == "definition"}


def test_an_html_details_is_one_entry_titled_by_its_summary() -> None:
    units = _atomic(HTML_PAGE)
    entries = _entry_units(units)
    for question, answer in ENTRIES:
        assert question in entries, question
        assert answer.split(". ")[0] in entries[question]
    # no unit holds a summary alone, apart from what it discloses
    assert not [u for u in units if u.unitType != "definition" and "?" in _said(u)]


def test_a_markdown_page_with_raw_details_reads_the_same_entries() -> None:
    units = _atomic(MARKDOWN_PAGE)
    entries = _entry_units(units)
    assert set(entries) == {q for q, _ in ENTRIES}
    for question, answer in ENTRIES:
        assert answer.split(". ")[0] in entries[question]
    said = " ".join(_said(u) for u in units)
    for tag in ("<details>", "</details>", "<summary>", "</summary>", "<b>"):
        assert tag not in said, tag


def test_both_readers_give_the_same_entry_blocks() -> None:
    page = read_page(HTML_PAGE)
    text, blocks = read_source(MARKDOWN_PAGE)

    def entries(text: str, blocks) -> list[tuple[str, list[str]]]:
        return [
            (b.title, [" ".join(text[s.start : s.end].split()) for s in b.segments])
            for b in blocks
            if b.kind == "definition"
        ]

    assert entries(page.text, page.blocks) == entries(text, blocks)
    assert len(entries(text, blocks)) == 3


def test_an_entry_unit_slices_its_source() -> None:
    for source in (HTML_PAGE, MARKDOWN_PAGE):
        for unit in build_tree(source, SourceMeta("s", "page", "text")):
            if unit.unitType == "definition":
                shown = source[unit.charStart : unit.charEnd]
                assert unit.title in html.unescape(shown).replace("<b>", "").replace("</b>", "")


def test_a_details_with_headings_or_others_inside_is_no_entry() -> None:
    inner = "<details><summary>Which cone is used?</summary><p>Cone six for stoneware.</p></details>"
    nested = f"<h1>Kiln</h1><details><summary>Firing</summary><p>Two firings.</p>{inner}</details>"
    blocks = read_page(nested).blocks
    assert [b.title for b in blocks if b.kind == "definition"] == ["Which cone is used?"]
    headed = (
        "# Kiln\n\n<details>\n<summary>Glaze recipes</summary>\n\n## Celadon\n\nMix the ash first.\n\n"
        "</details>\n"
    )
    _, blocks = read_source(headed)
    assert not [b for b in blocks if b.kind == "definition"]
    assert "Celadon" in [b.title for b in blocks if b.kind == "heading"]


def test_a_summary_outside_details_and_an_unclosed_details_in_markdown_are_no_entries() -> None:
    stray = "# Kiln\n\n<summary>Why fire slowly?</summary>\n\nSteam must leave the clay.\n"
    assert markdown_disclosures(stray) == []
    late = "# Kiln\n\n<details>\nSome words first.\n<summary>Why fire slowly?</summary>\n\nSteam.\n\n</details>\n"
    assert markdown_disclosures(late) == []  # a summary that is not the element's first content
    unclosed = "# Kiln\n\n<details><summary>Why fire slowly?</summary>\n\nSteam must leave the clay.\n"
    assert markdown_disclosures(unclosed) == []
    assert markdown_disclosures("no tags here at all") == []


def test_the_title_is_the_heading_of_a_page_without_an_h1() -> None:
    page = (
        "<html><head><title>Ridgeway Loom &amp; Warp Guide</title></head><body>"
        "<h2>Warping</h2><p>Wind the warp on the back beam first.</p>"
        "<h2>Weaving</h2><p>Beat each pick twice.</p></body></html>"
    )
    blocks = read_page(page).blocks
    assert (blocks[0].kind, blocks[0].level, blocks[0].title) == ("heading", 1, "Ridgeway Loom & Warp Guide")
    units = build_tree(page, SourceMeta("s", "page", "text"))
    aggregate = units[-1]
    assert aggregate.title == "Ridgeway Loom & Warp Guide"
    assert page[aggregate.charStart : aggregate.charEnd].startswith("Ridgeway Loom &amp; Warp Guide")
    with_h1 = page.replace("<h2>Warping</h2>", "<h1>Looms</h1><h2>Warping</h2>", 1)
    titles = [b.title for b in read_page(with_h1).blocks if b.kind == "heading"]
    assert titles == ["Looms", "Warping", "Weaving"]  # the page's own h1 is its heading


def test_head_metadata_is_no_text() -> None:
    said = " ".join(_said(u) + (u.title or "") for u in _atomic(HTML_PAGE))
    assert "keywords" not in said and "cones" not in said


def test_bad_input_builds_and_its_structure_is_counted() -> None:
    deep = 10_000
    nested = "<h1>K</h1>" + "<details><summary>Q?</summary>" * deep + "<p>Deep.</p>" + "</details>" * deep
    blocks = read_page(nested).blocks
    assert sum(b.kind == "definition" for b in blocks) == 1  # the innermost only
    assert len(blocks) == deep + 1  # the heading, the outer summaries, the entry
    md_nested = (
        "# K\n\n"
        + "\n".join(["<details><summary>Q?</summary>"] * deep)
        + "\n\nDeep.\n\n"
        + "\n".join(["</details>"] * deep)
    )
    assert len(markdown_disclosures(md_nested)) == deep
    assert sum(b.kind == "definition" for b in read_source(md_nested)[1]) == 1
    unclosed = "<h1>K</h1>" + "<details><summary>Q?</summary><p>a b.</p>" * 1000
    assert sum(b.kind == "definition" for b in read_page(unclosed).blocks) == 1  # open to the page's end
    stray = "<h1>K</h1>" + "<summary>Q?</summary><p>a b.</p>" * 1000
    assert not [b for b in read_page(stray).blocks if b.kind == "definition"]
    big = "T " * 500_000
    titled = read_page("<html><head><title>" + big + "</title></head><body><p>A line.</p></body></html>")
    assert [b.kind for b in titled.blocks] == ["paragraph"]  # no page's title: no heading
    summary = read_page("<h1>K</h1><details><summary>" + big + "</summary><p>A line.</p></details>")
    assert not [b for b in summary.blocks if b.kind == "definition"]
    assert read_page("<html><head><title>" + big).blocks == []
    assert build_tree(
        "# K\n\n<details><summary>" + big + "</summary>\n\nA.\n\n</details>\n", SourceMeta("s", "p", "text")
    )


BOXES = """<!DOCTYPE html><html><head><title>Tarnwick Boat Winch</title></head><body>
<h1>Tarnwick Boat Winch</h1>
<p>The winch pulls dinghies up the slipway.</p>
<div class="admonition note">
<p class="admonition-title">Note</p>
<p>Grease the pawl every spring.</p>
</div>
<div class="markdown-alert markdown-alert-warning"><p class="markdown-alert-title">Warning</p>
<p>Never stand behind a loaded cable.</p><p>Wear gloves.</p></div>
<div class="theme-admonition theme-admonition-tip"><div class="admonitionHeading_x1"><span>Before you start</span></div>
<div class="admonitionContent_x2"><p>Check the cable for frayed strands.</p></div></div>
<aside class="note"><p>The drum holds 30 metres of cable.</p></aside>
<div class="warning"><p>Caution</p><ul><li>Keep hands clear.</li></ul></div>
<div class="card"><p>Spare parts</p><p>Order pawls from the yard.</p></div>
<blockquote><p>It pulled my boat like a dream.</p></blockquote>
</body></html>
"""


def _paragraphs(page) -> list[str]:
    return [
        " ".join(page.text[s.start : s.end].split())
        for b in page.blocks
        if b.kind == "paragraph"
        for s in b.segments
    ]


def test_an_admonition_title_labels_the_box_text() -> None:
    said = _paragraphs(read_page(BOXES))
    assert "Note: Grease the pawl every spring." in said
    assert "Warning: Never stand behind a loaded cable." in said
    assert "Before you start: Check the cable for frayed strands." in said
    assert "Wear gloves." in said  # the box's next paragraph is a paragraph
    assert "Note" not in said and "Warning" not in said


def test_what_is_no_admonition_title_stays_as_it_is() -> None:
    page = read_page(BOXES)
    said = _paragraphs(page)
    assert "The drum holds 30 metres of cable." in said  # a box whose first text is its body
    assert "Caution" in said  # a title over a list labels no paragraph: shown as it is
    assert "Spare parts" in said and "Order pawls from the yard." in said  # a box of no admonition's kind
    assert "It pulled my boat like a dream." in said
    units = build_tree(BOXES, SourceMeta("s", "page", "text"))
    for unit in units:  # the offsets still slice the source in order
        if unit.kuType == "atomic" and unit.charStart is not None:
            assert unit.charStart <= unit.charEnd
    labelled = next(u for u in units if "Grease the pawl" in _said(u))
    assert BOXES[labelled.charStart : labelled.charEnd].startswith("Note</p>")


def test_bad_admonitions_build_and_their_structure_is_counted() -> None:
    deep = 10_000
    box = '<div class="admonition note"><p class="admonition-title">Note</p>'
    nested = read_page("<h1>K</h1>" + box * deep + "<p>Deep.</p>" + "</div>" * deep)
    said = _paragraphs(nested)
    assert len(said) == deep and said[-1] == "Note: Deep."  # each outer title shown as it is
    unclosed = read_page("<h1>K</h1>" + '<div class="warning"><p>Warning</p>' * 1000)
    assert _paragraphs(unclosed) == ["Warning"] * 1000
    big = "T " * 500_000
    long_title = read_page(
        '<h1>K</h1><div class="note"><p class="admonition-title">' + big + "</p><p>Body.</p></div>"
    )
    assert _paragraphs(long_title)[-1] == "Body."  # no title: the long text is a paragraph of its own


def test_details_written_as_code_stays_code() -> None:
    page = (
        "# Widgets\n\nA collapsible hint is written so:\n\n```html\n<details>\n<summary>Show the hint</summary>\n"
        "The hint text.\n</details>\n```\n\nUse `<details><summary>Hint</summary>` and `</details>` around it.\n"
    )
    text, blocks = read_source(page)
    assert not [b for b in blocks if b.kind == "definition"]
    assert [b.kind for b in blocks] == ["heading", "paragraph", "code", "paragraph"]


README = """# Quillfeather

Quillfeather turns plain-text field notes into a searchable birding journal.

## Installation

Run `pip install quillfeather` and then `quill init` in your notes folder.

## FAQ

<details>
<summary>Why are my sightings out of order?</summary>

Sightings are sorted by the time written in each note, not by the file date. Add a `time:` line to notes that lack one.

</details>

<details>
<summary>Where is the journal database kept?</summary>

The journal lives in `.quill/journal.db` inside your notes folder. Delete it to rebuild the index from scratch.

</details>

<details>
<summary>Can two people share one journal?</summary>

Not at the same time. The database is locked while `quill serve` runs, so a second writer waits until the lock is released.

</details>

## Licence

Quillfeather is released under the MIT licence.
"""


@needs_model
def test_a_readme_faq_entry_answers_its_own_question() -> None:
    units = units_of(README, name="README.md")
    kept = ask("Where is the journal database kept?", units)
    assert "journal.db" in (kept.answer or "")
    shared = ask("Can two people share one journal?", units)
    assert "Not at the same time" in (shared.answer or "")


def test_a_page_read_by_its_layout_reads_the_same_entries() -> None:
    # no Markdown markup the plain-text test knows (setext headings, no code spans): the layout reader, which
    # reads a line of tags as code
    plain = README.replace("`", "").replace("# Quillfeather", "Quillfeather\n============")
    plain = plain.replace("## Installation", "Installation\n------------").replace("## FAQ", "FAQ\n---")
    plain = plain.replace("## Licence", "Licence\n-------")
    text, blocks = read_source(plain)
    titles = [b.title for b in blocks if b.kind == "definition"]
    assert titles == [
        "Why are my sightings out of order?",
        "Where is the journal database kept?",
        "Can two people share one journal?",
    ]
    said = " ".join(text[s.start : s.end] for b in blocks for s in b.segments)
    assert "<details>" not in said and "</details>" not in said


def test_tag_runs_that_could_rescan_the_text_are_read_once() -> None:
    n = 20_000
    one_line = "# K\n\n" + "<details><summary>Q</summary>a</details>" * n
    assert len(markdown_disclosures(one_line)) == 1  # only the first opens its line
    summaries_last = "# K\n\n" + "<details>\n" * n + "<summary>x</summary>a</details>\n" * n
    assert len(markdown_disclosures(summaries_last)) == 1  # the innermost's summary is its first content
    assert sum(b.kind == "definition" for b in read_source(summaries_last)[1]) == 1
    indented = "# K\n\n" + " " * 400_000 + "<details>" * n
    assert markdown_disclosures(indented) == []
