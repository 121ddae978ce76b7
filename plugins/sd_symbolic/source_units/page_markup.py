"""Markup of a Markdown page beyond CommonMark's blocks: YAML front matter, HTML that shows nothing, and a
wiki's heading lines.

A page of a static site (Hugo, Jekyll, Docusaurus, MkDocs) opens with YAML front matter between two "---"
lines: the page's settings (weight, menu, reviewers, aliases), read as Markdown they became a paragraph of
"key: value" words, a list, and even headings (a commented "# key: value" line is an ATX heading). The site
shows none of it but the page's `title`, which its template renders as the page's heading: the front
matter is read as that level-1 heading, and nothing else of it is text. CommonMark's HTML blocks that show
nothing (a comment "<!-- … -->", a <style> or <script> element, each to its closing mark) are read as blank
lines. A line framed by the same run of "=" on both sides ("= Wire Protocol =", "== Replies ==") is a
heading of a wiki's markup (MediaWiki, Trac, Moin, Creole), its level the run's length.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

_FENCE_LINE = lazy_pattern(r"^---[ \t]*$")
_CLOSE_LINE = lazy_pattern(r"^(?:---|\.\.\.)[ \t]*$")
_KEY = lazy_pattern(r"^[A-Za-z_][\w.-]*:(?:[ \t]|$)")
_TITLE = lazy_pattern(r"^title:[ \t]+(?P<value>\S.*?)[ \t]*$")
_HIDDEN_OPEN = lazy_pattern(r"^ {0,3}(?:<!--|<(?P<tag>style|script)(?:[\s>]|$))", re.I)
_WIKI_HEADING = lazy_pattern(
    r"^(?P<marks>={1,6})[ \t]+(?P<title>[^=\s](?:.*?[^=\s])?)[ \t]+(?P=marks)[ \t]*$"
)
MAX_FRONT_MATTER_LINES = 200


def wiki_heading(line: str) -> tuple[int, str] | None:
    """(level, title) of a wiki heading line ("== Replies ==" -> (2, "Replies")); None for any other line."""
    found = _WIKI_HEADING.match(line) if line.startswith("=") else None
    return (len(found["marks"]), found["title"]) if found else None


def front_matter(text: str, lines: list[tuple[int, int]]) -> tuple[int, str] | None:
    """(the index of the line after the front matter, the page's title or "") when the text opens with YAML
    front matter: a "---" first line, a mapping key next, and a closing "---" or "..." line."""
    if not lines or not _FENCE_LINE.match(text[slice(*lines[0])].lstrip("\ufeff")):
        return None
    if len(lines) < 3 or not _KEY.match(text[slice(*lines[1])]):
        return None
    title = ""
    for k in range(1, min(len(lines), MAX_FRONT_MATTER_LINES)):
        line = text[slice(*lines[k])]
        if _CLOSE_LINE.match(line):
            return k + 1, title
        found = _TITLE.match(line)
        if found and not title:
            title = found["value"].strip().strip("\"'").strip()
    return None


def hidden_html_end(text: str, lines: list[tuple[int, int]], i: int) -> int | None:
    """The index of the line after an HTML block that shows nothing (a comment, a style or script element)
    opening on line i; None when line i opens none."""
    line = text[slice(*lines[i])]
    found = _HIDDEN_OPEN.match(line)
    if found is None:
        return None
    close = f"</{found['tag'].lower()}>" if found["tag"] else "-->"
    opened_at = found.end()
    for k in range(i, len(lines)):
        here = text[slice(*lines[k])]
        if close in (here[opened_at:] if k == i else here).lower():
            return k + 1
    return None
