"""What the nodes of a plain-text layout are: code, tables, headings (and their levels), definition terms.

A one-line label over deeper nodes is a heading or a term; a lone title line is a heading; unpunctuated
lines after a lead-in or shaped like a synopsis are code (see outline.py's docstring for the whole reading).
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .outline_layout import (
    MAX_DEFINITION_CHARS,
    NUMBERED_TITLE,
    PILCROW,
    TERMINAL,
    Node,
    columns,
    columns_align,
    content,
    term_like,
    title_like,
)

_SYNOPSIS_CHARS = lazy_pattern(r"[\[\]{}|<>]")
_CODE_CHARS = lazy_pattern(r"[\[\]{}|<>=$/\\]|(?:^|\s)--?\w|\w\(\d\)")

# --------------------------------------------------------------------------- classification


_ELLIPSIS = lazy_pattern(r"\.\.\.[\])}]*$")  # "[FILE...]": an argument list, not a sentence's end
# a bracketed remark of three or more words ("[bug introduced in release 2.1]", "[fixed since the
# beginning]"): prose a change log or a manual appends to a statement, not a synopsis's optional argument
# ("[-v]", "[FILE...]", "[--output=FILE]"), whose brackets hold one argument
_REMARK = lazy_pattern(r"\[(?:[A-Za-z][\w'.-]*[ \t]+){2,}[\w'.-]+\]")
_TRAILING_REMARK = lazy_pattern(r"[ \t]*\[(?:[A-Za-z][\w'.-]*[ \t]+){2,}[\w'.-]+\][ \t]*$")


def _unpunctuated(text: str, node: Node) -> bool:
    """No line of the node ends a sentence; a line that ends one before a bracketed remark ("… is fixed.
    [regression since 1.2]") does."""

    def open_line(line: str) -> bool:
        line = _TRAILING_REMARK.sub("", line) or line
        return not TERMINAL.search(line) or line.endswith(":") or _ELLIPSIS.search(line) is not None

    return all(open_line(content(text, ln)) for ln in node.lines)


def _synopsis_line(line: str) -> bool:
    """A line with a synopsis's marks (brackets, braces, pipes, angle brackets) outside bracketed remarks."""
    return _SYNOPSIS_CHARS.search(_REMARK.sub("", line) if "[" in line else line) is not None


# reStructuredText's explicit literal blocks: a paragraph ending with "::" (docutils: "expanded to ':'")
# or a code directive; everything indented deeper after it, up to the next line at or left of its indent,
# is literal text whatever its punctuation (an example's output, a doctest, a shell session)
_LITERAL_LEAD = lazy_pattern(r"::\s*$")
_CODE_DIRECTIVE = lazy_pattern(r"^\.\.\s+(?:code-block|code|sourcecode)::", re.I)
_DIRECTIVE = lazy_pattern(
    r"^\.\.\s+[\w:-]+::", re.M
)  # ".. note::": a directive's "::" opens no literal block


def directive_argument(title: str) -> str:
    """A reStructuredText directive line as the title it gives ('.. function:: dedent(text)' ->
    'dedent(text)', '.. attribute:: width' -> 'width'); a directive without an argument, or any other
    line, as it is."""
    found = _DIRECTIVE.match(title)
    return (title[found.end() :].strip() or title) if found else title


def mark_literal_blocks(text: str, nodes: list[Node]) -> None:
    """The nodes of a reStructuredText literal block are code: the deeper nodes after a lead ending with
    "::" (the lead stays prose: it introduces the block, as a Markdown lead-in does its fence), and a code
    directive's body (the directive line itself is markup, read as no block). Runs before the other
    readings, which skip nodes already code."""
    i = 0
    while i < len(nodes):
        node = nodes[i]
        body = text[node.start : node.end]
        directive = _CODE_DIRECTIVE.match(body) is not None
        last = content(text, node.lines[-1])
        lead = _LITERAL_LEAD.search(body) is not None and not _DIRECTIVE.match(last)
        if node.kind == "code" or not (directive or lead):
            i += 1
            continue
        j = i + 1
        while j < len(nodes) and nodes[j].indent > node.indent:
            nodes[j].kind = "code"
            j += 1
        if directive:
            node.kind = "markup"  # the directive line is markup, as a Markdown fence is: no unit quotes it
        elif j > i + 1 and node.kind == "label":
            node.kind = "text"  # "On Windows, run::" over its block: a lead-in, not a term or a heading
        i = j if j > i + 1 else i + 1


def mark_code(text: str, nodes: list[Node]) -> None:
    """Code: unpunctuated code-shaped lines after a lead-in ending with ':' (with every deeper or equal
    unpunctuated node after them: a config stanza keeps its own indentation), or synopsis-shaped lines."""
    i = 0
    while i < len(nodes):
        node = nodes[i]
        prev = nodes[i - 1] if i else None
        lead_in = (
            prev is not None
            and prev.kind in ("text", "label", "item", "inline")
            and text[prev.start : prev.end].rstrip().endswith(":")
        )
        lines = [content(text, ln) for ln in node.lines]
        if lines[0].startswith("-- "):
            i += 1  # a signature ("-- Name <mail>  date") closes an entry: prose, not code
            continue
        # after a lead-in, unpunctuated lines indented deeper than it, or shaped like code, are an example
        deeper = lead_in and prev is not None and node.indent > prev.indent
        shaped = deeper or sum(1 for ln in lines if _CODE_CHARS.search(ln)) * 2 >= len(lines)
        synopsis = sum(1 for ln in lines if _synopsis_line(ln)) * 2 >= len(lines)
        over_nested = i + 1 < len(nodes) and nodes[i + 1].indent > node.indent  # a term, unless a stanza
        over_prose = over_nested and not _unpunctuated(text, nodes[i + 1])  # a term over its description
        if (
            node.kind in ("text", "label", "inline")
            and _unpunctuated(text, node)
            and not lines[-1].endswith(":")
            and (
                (lead_in and shaped and not over_prose)
                or (synopsis and node.kind != "inline" and not over_nested)
            )
        ):
            node.kind = "code"
            j = i + 1
            while (
                j < len(nodes)
                and nodes[j].indent >= node.indent
                and nodes[j].kind in ("text", "label", "inline")
                and _unpunctuated(text, nodes[j])
                and (not nodes[j].blank_before or nodes[j].indent > node.indent)
            ):
                nodes[j].kind = "code"
                j += 1
            i = j
            continue
        i += 1


def is_table(text: str, node: Node) -> bool:
    if len(node.lines) < 3 or node.kind not in ("text", "inline", "label"):
        return False
    counts = [len(columns(text, ln)) for ln in node.lines]
    header = content(text, node.lines[0])
    return (
        min(counts) >= 3
        and not any(c.isdigit() for c in header)
        and not TERMINAL.search(header)
        and columns_align(text, node.lines)
    )


def subtree_end(nodes: list[Node], i: int) -> int:
    """Index after the last node nested under node i (deeper indent)."""
    j = i + 1
    while j < len(nodes) and nodes[j].indent > nodes[i].indent:
        j += 1
    return j


def classify_labels(text: str, nodes: list[Node]) -> None:
    """A one-line node over deeper nodes is a heading (over labels or items, or much text, or ALL-CAPS /
    numbered / title-shaped at the margin) or a definition term; a lone title line over same-indent body
    text is a heading; any other one-liner is a paragraph."""
    has_nested = [subtree_end(nodes, i) > i + 1 for i in range(len(nodes))]
    for i, node in enumerate(nodes):
        if node.kind != "label":
            continue
        body = content(text, node.lines[0])
        end = subtree_end(nodes, i)
        nested = nodes[i + 1 : end]
        if nested:
            size = sum(n.end - n.start for n in nested)
            structured = any(
                n.kind in ("item", "heading", "inline", "table")
                or (n.kind == "label" and has_nested[i + 1 + k])
                for k, n in enumerate(nested)
            )
            # one entry of a list of terms stays a term however long its plain description
            long_entry = size > MAX_DEFINITION_CHARS and _among_terms(text, nodes, i)
            if not term_like(body) or structured or (size > MAX_DEFINITION_CHARS and not long_entry):
                node.kind = "heading" if not TERMINAL.search(body) else "text"
            else:
                node.kind = "term"
            continue
        numbered = NUMBERED_TITLE.match(body)
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if (
            title_like(body)
            and following is not None
            and following.kind not in ("heading",)
            and (numbered or body.endswith(PILCROW) or following.blank_before or node.indent == 0)
            and (
                numbered
                or body.endswith(PILCROW)
                or not (following.kind == "label" and title_like(content(text, following.lines[0])))
            )
        ):
            node.kind = "heading"
        else:
            node.kind = "text"


def _among_terms(text: str, nodes: list[Node], i: int) -> bool:
    """Node i is one entry of a list of terms: the node before it or after its subtree at its indent is a
    term with its description ("RemoteForward" between "PubkeyAuthentication" and "RequestTTY"). Such a
    label is a term however long its description: as a heading it would become the section of every
    later entry of the list."""
    node = nodes[i]
    end = subtree_end(nodes, i)
    after = nodes[end] if end < len(nodes) else None
    before = next((n for n in reversed(nodes[:i]) if n.indent <= node.indent), None)
    for other in (before, after):
        if other is None or other.indent != node.indent:
            continue
        if other.kind in ("term", "inline"):
            return True
        if other.kind == "label" and term_like(content(text, other.lines[0])):
            return other is after and subtree_end(nodes, end) > end + 1  # the next label has a description
    return False


def numbered_titles(text: str, nodes: list[Node]) -> None:
    """ "2. Completing the move to Python 3¶" alone on its line, at the margin, over body text that is not
    another item: a numbered heading, not a list of one."""
    for i, node in enumerate(nodes):
        if node.kind != "item" or len(node.lines) != 1 or node.indent > 1 or not node.marker[:1].isdigit():
            continue
        body = content(text, node.lines[0])
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if not NUMBERED_TITLE.match(body) or not title_like(body) or following is None:
            continue
        if following.kind != "item" and (following.blank_before or body.endswith(PILCROW)):
            node.kind = "heading"


def assign_levels(text: str, nodes: list[Node]) -> None:
    stack: list[tuple[int, int]] = []  # (indent, level) of the open headings
    for node in nodes:
        if node.kind != "heading":
            continue
        if node.level:  # an underlined title: "=" level 1, "-" level 2
            stack = [(node.indent, node.level)]
            continue
        numbered = NUMBERED_TITLE.match(content(text, node.lines[0]))
        if numbered and node.indent <= 1:
            node.level = min(6, numbered["num"].count(".") + 1)
            stack = [(node.indent, node.level)]
            continue
        while stack and stack[-1][0] >= node.indent:
            stack.pop()
        node.level = min(6, stack[-1][1] + 1 if stack else 1)
        stack.append((node.indent, node.level))


# "use-ipv6= Takes a boolean value …": a setting's name with its "=" (an empty assignment), then its description
_SETTING = lazy_pattern(r"(?P<term>[A-Za-z][\w.-]*=)[ \t]+(?=[A-Z(\"'])")


def setting_terms(text: str, nodes: list[Node]) -> None:
    """A paragraph that opens with a setting's name and "=" ("use-ipv6= Takes a boolean value …", as a
    configuration file's manual writes each key of an INI section) is that setting's definition: the name
    is its term, the paragraph its description. Read as prose, a long description was cut into units
    apart from the name it describes, and its last sentence ("Defaults to "no".") named nothing."""
    for i, node in enumerate(nodes):
        opens = node.blank_before or i == 0 or nodes[i - 1].kind == "heading"
        if node.kind != "text" or not opens:
            continue
        m = _SETTING.match(content(text, node.lines[0]))
        if m is None:
            continue
        node.kind = "inline"
        node.term_end = node.lines[0].body + m.end("term")
        node.body_start = node.lines[0].body + m.end()
