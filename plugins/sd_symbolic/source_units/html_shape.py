"""The shape of an HTML source: whether a source is one (`looks_like_html`, by its shape alone, never by
its name), and the copy of it that html.parser reads in linear time (`parseable`)."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

# a document: a doctype, or an <html>/<head>/<body> element first (after an XML declaration or comments)
_DOCUMENT = lazy_pattern(
    r"\A\ufeff?\s*(?:<\?xml[^>]{0,200}>\s*)?(?:<!--(?:[^-]|-(?!->)){0,2000}-->\s*){0,20}"
    r"<(?:!doctype\s+html|html|head|body)[\s>]",
    re.I,
)
_TAG_OPEN = lazy_pattern(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[\s/>]")
_PARAGRAPHS = lazy_pattern(r"\n[ \t]*\n\s*")
MIN_BLOCK_TAGS = 8  # a fragment without a doctype: this many block tags at least …
MIN_TAGGED_SHARE = 0.8  # … and this share of its blank-line-parted paragraphs opening with a tag
MAX_READ = 200_000  # of the source, to tell its shape

# the elements whose text is a block of its own (html_page.py ends a run of text at their start and end)
BLOCK = frozenset(
    {
        *("h1", "h2", "h3", "h4", "h5", "h6"),
        *("p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "address"),
        *("figure", "figcaption", "details", "summary", "form", "fieldset", "legend", "center", "hr", "body"),
        *("ul", "ol", "menu", "li", "dl", "dt", "dd", "pre", "table", "caption", "thead", "tbody", "tfoot"),
        *("tr", "td", "th", "html"),
    }
)


def looks_like_html(text: str) -> bool:
    """An HTML document: a doctype or an <html>, <head> or <body> element opening the text; or a fragment
    that opens with a tag, holds MIN_BLOCK_TAGS block tags or more, and whose paragraphs (parted by blank
    lines) nearly all open with a tag — a Markdown page with a few tags in it has its paragraphs in
    Markdown."""
    if _DOCUMENT.match(text):
        return True
    head = text[:MAX_READ]
    first = _TAG_OPEN.match(head.lstrip("\ufeff \t\r\n"))
    if first is None or first.group(2).lower() not in BLOCK:
        return False
    blocks = 0
    for m in _TAG_OPEN.finditer(head):
        if not m.group(1) and m.group(2).lower() in BLOCK:
            blocks += 1
            if blocks >= MIN_BLOCK_TAGS:
                break
    if blocks < MIN_BLOCK_TAGS:
        return False
    paragraphs = [p for p in _PARAGRAPHS.split(head) if p.strip()]
    tagged = sum(1 for p in paragraphs if p.lstrip().startswith("<"))
    return tagged >= MIN_TAGGED_SHARE * len(paragraphs)


_OPENER = lazy_pattern(r"<(?=[A-Za-z/!?])")


def parseable(text: str) -> tuple[str, int]:
    """The source as html.parser is given it: the same length, every character where it was, but what would
    make the parser scan far ahead again and again left out. html.parser looks for a construct's end from
    each `<` that may open one (a tag's `>`, a comment's `-->`) and for a `;` after each `&#`; on a source
    with many `<` and no `>` after them ("if a<b and c<d …") each search runs to the text's end, which is
    quadratic. So a `<` whose construct does not end before the next `<` that may open one is no tag here — it is shown as text, as the rest of its run — and every `&` is
    read as text by the parser (entities are decoded from the source: html_page.py). Every search the
    parser makes then ends before the next construct: linear in all. (A `<` inside a quoted attribute value
    makes its tag text; such a `<` is written `&lt;` in all but a few pages.) With it, where the page ends:
    a comment that never closes hides the rest of the source, as in a browser."""
    chars = list(text.replace("&", "_"))
    opens = [m.start() for m in _OPENER.finditer(text)]
    gt = cc = -1  # the next ">" and the next "-->" at or after the current opener
    for k, i in enumerate(opens):
        nxt = opens[k + 1] if k + 1 < len(opens) else len(text)
        if text.startswith("<![", i):  # a CDATA section (XML's, not HTML's): its end is searched too far
            ok = False
        elif text.startswith("<!--", i):
            if cc < i + 4 and cc != -2:
                cc = text.find("-->", i + 4)
                cc = -2 if cc < 0 else cc
            if cc == -2:
                return "".join(chars[:i]), i
            ok = True  # the parser reads on to its close at once, past any `<` inside
        else:
            if gt <= i and gt != -2:
                gt = text.find(">", i + 1)
                gt = -2 if gt < 0 else gt
            ok = 0 <= gt < nxt
        if not ok:
            chars[i] = "_"
    return "".join(chars), len(text)
