"""Star headings of a plain-text file in Emacs outline mode or Org mode ("* Release 1.12", "** Bug fixes").

Such a file says what it is on its first line, the Emacs mode line ("Widget NEWS  -*- outline -*-",
"-*- mode: org -*-"). There a line at the margin opening with a run of stars and a space is a heading whose
level is the number of stars. The same files often keep "* " bullets too (a NEWS file's older entries), so a
star line is read as a heading only when it looks like one: a single line without final punctuation that
stands alone (a blank line after it, or a deeper star heading). Without the mode line a star line is a
bullet, as everywhere else.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .outline_layout import TERMINAL, Node, content

# "-*- outline -*-", "-*- mode: org; coding: utf-8 -*-": the Emacs mode line of the file's first two lines
_MODE_LINE = lazy_pattern(r"-\*-(?:[^\n]*?[\s;:])?(?:outline|org)(?:[\s;][^\n]*?)?-\*-", re.I)
_STARS = lazy_pattern(r"(\*+)[ \t]+(?=\S)")


def star_mode(text: str) -> bool:
    """The file declares outline or Org mode in an Emacs mode line on one of its first two lines."""
    head = "\n".join(text.lstrip("\ufeff").split("\n", 2)[:2])
    return _MODE_LINE.search(head) is not None


def star_headings(text: str, nodes: list[Node]) -> None:
    """In a file in outline or Org mode: each star line at the margin that stands alone as a title becomes a
    heading of its star count's level, its title after the stars (`marker` keeps them)."""
    if not star_mode(text):
        return
    stars = [_star(text, node) for node in nodes]
    for i, node in enumerate(nodes):
        found = stars[i]
        if found is None:
            continue
        after = nodes[i + 1] if i + 1 < len(nodes) else None
        deeper = after is not None and (s := stars[i + 1]) is not None and len(s[0]) > len(found[0])
        if after is not None and not after.blank_before and not deeper:
            continue  # "* item" directly over the next "* item": a bullet list
        node.kind, node.level = "heading", min(6, len(found[0]))
        node.marker, node.body_start = found[0], node.lines[0].body + found[1]


def _star(text: str, node: Node) -> tuple[str, int] | None:
    """(stars, where the title starts after them) of a one-line node at the margin shaped like a title."""
    if node.indent != 0 or len(node.lines) != 1 or node.kind in ("code", "table"):
        return None
    body = content(text, node.lines[0])
    m = _STARS.match(body)
    if m is None or TERMINAL.search(body.rstrip()):
        return None
    return m.group(1), m.end()


def star_title(text: str, node: Node) -> str | None:
    """A star heading's title without its stars; None for any other heading."""
    if node.marker and set(node.marker) == {"*"} and node.body_start >= 0:
        return text[node.body_start : node.end]
    return None
