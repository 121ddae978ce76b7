"""Plain-text documents (man pages, NEWS files, text exports of manuals) read by their layout.

Plain text says with indentation and line shape what Markdown says with markup:
- a heading: an ALL-CAPS line at the margin ("RETURN VALUE"), a numbered title ("2.1. Removal of …"), a
  short title line over body text, or a label whose indented block holds further labels or items
  ("   Operation mode" over the option list, a changelog entry's header line over its bullets);
- a definition: a term line over a more-indented description ("-f, --file=ARCHIVE" / "Use archive …"),
  or a term and its description on one line, two spaces apart ("2      Fatal error.");
- a list item: a bullet or number, its continuation lines under its text; a bullet with indented
  paragraphs of its own is an entry (a definition led by its first paragraph);
- a table: lines of three or more columns two spaces apart under a header line;
- code: unpunctuated lines after a lead-in ending with ":" ("could look like:"), or lines of synopsis
  shape (brackets, braces, pipes);
- a question (a line ending with "?") over the lines that answer it: a definition with the question as
  its term (a FAQ).
Everything else is a paragraph. The result is the block list the Markdown reader (blocks.py) makes, so
sections, grouping and the KU tree treat both alike.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .blocks import parse_blocks
from .c_source import c_source_blocks, looks_like_c_source
from .config_file import config_blocks, looks_like_config
from .details import fold_disclosures, markdown_disclosures
from .directive_fences import without_directive_fences
from .entries import footnotes, questions_with_answers, term_lines
from .hyphenation import attach_joins
from .notebook import notebook_markdown
from .outline_labels import (
    assign_levels,
    classify_labels,
    directive_argument,
    is_table,
    mark_code,
    mark_literal_blocks,
    numbered_titles,
    setting_terms,
    subtree_end,
)
from .outline_layout import PILCROW, Node, columns, content, layout_lines, layout_nodes
from .outline_stars import star_headings, star_title
from .segments import Block, BlockList, Segment, sentences_in, split_long
from .stanzas import looks_like_stanzas, stanza_blocks


def read_blocks(text: str) -> list[Block]:
    """The blocks of any source (`read_source`'s blocks)."""
    return read_source(text)[1]


def read_source(text: str) -> tuple[str, list[Block]]:
    """The text the source's blocks are read from, and the blocks: a configuration file's settings and
    comments (config_file.py), a stanza file's records (stanzas.py), a C-family source's documented
    declarations (c_source.py), by its layout when it is plain text (its words broken at a line's end joined:
    hyphenation.py), by its markup otherwise; in both, a question paragraph and the paragraphs answering it
    are one definition (a FAQ entry).

    The text is the source itself, but for Markdown whose MyST prose directives' fences are rewritten in
    place (directive_fences.py: the same length, every offset kept). Every slice of a block's span (its
    pieces, a unit's body) is taken from that text: sliced from the source, a span across a blanked fence
    or option line quotes the markup ("```{note}", ":class: tip") in the unit. A Jupyter notebook's text is
    its cells as Markdown (notebook.py), not its JSON."""
    text = notebook_markdown(text) or text
    if looks_like_config(text):
        return text, questions_with_answers(text, config_blocks(text))
    if looks_like_stanzas(text):
        return text, stanza_blocks(text)
    if looks_like_c_source(text):
        return text, c_source_blocks(text)
    if looks_like_plain_text(text):
        blocks = fold_disclosures(text, parse_outline(text), markdown_disclosures(text))  # raw <details>
        attach_joins(text, blocks)
        return text, blocks
    text = without_directive_fences(text)  # "```{note}": a MyST directive's body is the page's own text
    blocks = footnotes(text, parse_blocks(text))
    blocks = fold_disclosures(text, blocks, markdown_disclosures(text))  # raw <details> entries
    return text, questions_with_answers(text, term_lines(text, blocks))


_MARKDOWN = lazy_pattern(
    r"^ {0,3}#{1,6}[ \t]"  # ATX headings
    r"|(?:\A|\n[ \t]*\n) {0,3}(?:```|~~~)"  # fences opening after a blank line (one under a title underlines it)
    r"|^\s*\|.*\|\s*$"  # pipe tables
    r"|\[(?:[^\[\]\n]|\[[^\[\]\n]*\])+\]\([^)\n]+\)"  # inline links (one bracket pair inside: linear)
    r"|^\[\^?[^\]\n]+\]:\s",  # link or footnote definitions
    re.M,
)


def looks_like_plain_text(text: str) -> bool:
    """No Markdown markup (ATX headings, fences, pipe tables, links): the layout carries the structure."""
    return _MARKDOWN.search(text[:200_000]) is None


# --------------------------------------------------------------------------- blocks


def parse_outline(text: str) -> list[Block]:
    """The blocks of a plain-text document (see the module docstring)."""
    raw = layout_lines(text)
    nodes = layout_nodes(text, raw)
    mark_literal_blocks(text, nodes)
    mark_code(text, nodes)
    for node in nodes:
        if is_table(text, node):
            node.kind = "table"
    numbered_titles(text, nodes)
    classify_labels(text, nodes)
    star_headings(text, nodes)
    setting_terms(text, nodes)
    assign_levels(text, nodes)
    out = BlockList(text)
    i = 0
    while i < len(nodes):
        i = _emit(out, nodes, i)
    return questions_with_answers(text, out.blocks)


def _emit(out: BlockList, nodes: list[Node], i: int) -> int:
    text = out.text
    node = nodes[i]
    if node.kind == "markup":
        return i + 1  # a reStructuredText code directive's own line: what it opens is the next block
    if node.kind == "heading":
        title = star_title(text, node) or content(text, node.lines[0])
        title = title.strip().rstrip(PILCROW).strip()
        title = directive_argument(" ".join(title.split()))
        out.add(Block("heading", node.start, node.end, level=node.level, title=title))
        return i + 1
    if node.kind == "code":
        j = i + 1
        while j < len(nodes) and nodes[j].kind == "code" and not _new_code_run(nodes, j):
            j += 1
        start, end = node.start, nodes[j - 1].end
        out.add(Block("code", start, end, segments=[Segment(start, end, "code", 0)]))
        return j
    if node.kind == "table":
        blk = Block("table", node.start, node.end)
        for ln in node.lines:
            cells = [text[a:b].strip() for a, b in columns(text, ln)]
            blk.segments.append(Segment(ln.body, ln.end, "row", 0, cells=cells))
        out.add(blk)
        return i + 1
    if node.kind == "term":
        end = subtree_end(nodes, i)
        title = directive_argument(" ".join(content(text, node.lines[0]).split()))
        segs = [Segment(node.start, node.end, "term", 0)]
        segs += _body_segments(out, nodes[i + 1 : end])
        out.add(Block("definition", node.start, nodes[end - 1].end, title=title, segments=segs))
        return end
    if node.kind == "inline":
        end = subtree_end(nodes, i)
        title = " ".join(text[node.start : node.term_end].split())
        segs = [Segment(node.start, node.term_end, "term", 0)]
        segs += out.sentences(node.body_start, node.end)
        segs += _body_segments(out, nodes[i + 1 : end])
        out.add(Block("definition", node.start, nodes[end - 1].end, title=title, segments=segs))
        return end
    if node.kind == "item":
        end = subtree_end(nodes, i)
        if end > i + 1 and not any(n.kind in ("item", "heading") for n in nodes[i + 1 : end]):
            # a bullet with paragraphs of its own: an entry, led by its first paragraph
            segs = out.sentences(node.body_start, node.end)
            if segs:
                segs[0].marker = node.marker
            segs += _body_segments(out, nodes[i + 1 : end])
            out.add(Block("definition", node.start, nodes[end - 1].end, segments=segs))
            return end
        j = i
        blk = Block("list", node.start, node.end)
        while j < len(nodes) and nodes[j].kind == "item" and nodes[j].indent == node.indent:
            item = nodes[j]
            if subtree_end(nodes, j) > j + 1:
                break
            ordered = item.marker[:1].isdigit() or item.marker.startswith("(")
            for x, y in split_long(text, item.body_start, item.end):
                first = x == item.body_start
                blk.segments.append(
                    Segment(
                        item.start if first else x,
                        y,
                        "item",
                        0,
                        marker=item.marker if first else "",
                        ordered=ordered,
                        body_start=x,
                    )
                )
            blk.end = item.end
            j += 1
        if j == i:  # an item over nested items: its own line is a list of one
            blk.segments.append(
                Segment(node.start, node.end, "item", 0, marker=node.marker, body_start=node.body_start)
            )
            j = i + 1
        out.add(blk)
        return j
    out.add(Block("paragraph", node.start, node.end, segments=out.sentences(node.start, node.end)))
    return i + 1


def _new_code_run(nodes: list[Node], j: int) -> bool:
    """Two code runs separated by a blank line at the same indent stay one block only when nested."""
    return nodes[j].blank_before and nodes[j].indent <= nodes[j - 1].indent and nodes[j - 1].kind != "code"


def _body_segments(out: BlockList, nested: list[Node]) -> list[Segment]:
    """The segments of a definition's description: sentences, with code blocks whole."""
    text = out.text
    segs: list[Segment] = []
    k = 0
    while k < len(nested):
        node = nested[k]
        if node.kind == "code":
            j = k + 1
            while j < len(nested) and nested[j].kind == "code":
                j += 1
            segs.append(Segment(node.start, nested[j - 1].end, "code", 0))
            k = j
            continue
        start = node.body_start if node.kind == "item" and node.body_start >= 0 else node.start
        found = sentences_in(text, start, node.end, 0)
        if node.kind == "item" and found:
            found[0].marker = node.marker
        segs += found
        k += 1
    return segs
