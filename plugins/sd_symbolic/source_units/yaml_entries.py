"""An entry of a YAML mapping that documents something (a module's option, a returned value): its key, its
description and its fields are one definition.

Documentation kept as YAML (an Ansible module's `options:` and `RETURN`, an OpenAPI schema's properties, a
chart's values) describes each key by a nested mapping: a prose `description` (a sequence of sentences or
one text) next to short fields (`type: int`, `default: 300`, `version_added: "2.3"`). Read as Markdown, the
description's `- ` items are a list whose last item runs on, line by line, through the fields and into the
next key ("Number of seconds to wait before starting to poll. type: int default: 0 port: description."):
the `default:` of one option ended in the unit of the option before it. Read here, by indentation as YAML
is: a line `key:` whose deeper-indented block is a mapping with both a prose child (a sequence of items, or
a text of several words) and a short scalar child is a definition whose term is the key; its sentences are
the prose, its fields each one statement, in the order written. A mapping of mappings (`options:` over the
options) is not an entry; its keys are read one by one. A line less indented than a list's marker that is a
mapping key is no continuation of the item (its block is above the list's), so the list ends there.
"""

from __future__ import annotations

from dataclasses import dataclass

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import prose_value

# `key:` or `key: value` (a YAML mapping line; the key an identifier, no blanks)
KEY_LINE = lazy_pattern(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*):(?:[ \t]+(?P<value>\S.*?))?[ \t]*$")
_ITEM_LINE = lazy_pattern(r"^(?P<indent> *)- +(?=\S)")
MAX_ENTRY_LINES = 400  # an entry's block read at most (bounds the scan of a line that opens none)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def ends_item(line: str, marker_indent: int) -> bool:
    """A mapping key line less indented than a list's marker: it belongs to the structure above the list."""
    return _indent(line) < marker_indent and KEY_LINE.match(line) is not None


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    start: int  # the key's first character
    end: int
    term: tuple[int, int]  # the `key:` line
    parts: list[tuple[tuple[int, int], bool]]  # in order: (span, prose?): prose is read as sentences, a field
    after: int  # the index of the line after the entry


def labels_sequence(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    """lines[i] is a `key:` line over a deeper-indented sequence (`notes:` over its `- ` items): it opens the
    block of its sequence, whatever text stands above it."""
    key = KEY_LINE.match(text[slice(*lines[i])])
    if key is None or key["value"] or i + 1 >= len(lines):
        return False
    item = _ITEM_LINE.match(text[slice(*lines[i + 1])])
    return item is not None and len(item["indent"]) > len(key["indent"])


def yaml_entry(text: str, lines: list[tuple[int, int]], i: int) -> Entry | None:
    """The entry a `key:` line at lines[i] opens, or None when the line opens no documented entry (see the
    module docstring)."""
    head = text[slice(*lines[i])]
    opened = KEY_LINE.match(head) if head.endswith(":") else None
    if opened is None or opened["value"]:
        return None
    base = len(opened["indent"])
    end = i + 1
    while end < len(lines) and end - i <= MAX_ENTRY_LINES:
        line = text[slice(*lines[end])]
        if line.strip() and _indent(line) <= base:
            break
        end += 1
    while end > i + 1 and not text[slice(*lines[end - 1])].strip():
        end -= 1  # trailing blank lines belong to what follows
    children = _children(text, lines, i + 1, end)
    if children is None:
        return None
    prose = [c for c in children if c[1]]
    if not prose or len(prose) == len(children):
        return None
    a = lines[i][0] + base
    parts: list[tuple[tuple[int, int], bool]] = []
    for span, is_prose, items in children:
        parts += [(x, True) for x in items] if is_prose else [(span, False)]
    return Entry(opened["key"], a, lines[end - 1][1], (a, lines[i][1]), parts, end)


_Child = tuple[tuple[int, int], bool, list[tuple[int, int]]]  # (its span, prose?, its prose spans)


def _children(text: str, lines: list[tuple[int, int]], start: int, end: int) -> list[_Child] | None:
    """The direct children of a mapping block lines[start:end]: each key's span (with its continuation
    lines), whether it is prose, and its prose spans (sequence items, or a text value); None when the block
    is not a mapping of fields (a line at the children's indent is no key, or a child is itself a mapping)."""
    first = next((k for k in range(start, end) if text[slice(*lines[k])].strip()), None)
    if first is None:
        return None
    depth = _indent(text[slice(*lines[first])])
    out: list[_Child] = []
    k = first
    while k < end:
        a, b = lines[k]
        line = text[a:b]
        m = KEY_LINE.match(line)
        if m is None or _indent(line) != depth:
            return None
        j = k + 1
        while j < end and (not text[slice(*lines[j])].strip() or _indent(text[slice(*lines[j])]) > depth):
            j += 1
        last = j
        while last > k + 1 and not text[slice(*lines[last - 1])].strip():
            last -= 1
        span = (a + depth, lines[last - 1][1])
        below = [lines[x] for x in range(k + 1, last) if text[slice(*lines[x])].strip()]
        if m["value"]:
            value_at = a + m.start("value")
            is_prose = prose_value(m["value"])  # not `[ a, b ]`
            out.append((span, is_prose, [(value_at, span[1])] if is_prose else []))
        elif below and _ITEM_LINE.match(text[slice(*below[0])]):
            items = _items(text, below)
            if items is None:
                return None
            out.append((span, True, items))
        elif below and any(KEY_LINE.match(text[x:y]) for x, y in below):
            return None  # a nested mapping: this block is not one entry's fields
        else:
            out.append((span, False, []))
        k = j
        while k < end and not text[slice(*lines[k])].strip():
            k += 1
    return out


def _items(text: str, below: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """The text spans of a sequence's `- ` items (each with its continuation lines); None when a line is a
    nested mapping's key (a sequence of mappings is no list of sentences)."""
    spans: list[tuple[int, int]] = []
    marker = _indent(text[slice(*below[0])])
    for a, b in below:
        line = text[a:b]
        item = _ITEM_LINE.match(line)
        if item and len(item["indent"]) == marker:
            if KEY_LINE.match(line[item.end() :]):
                return None
            spans.append((a + item.end(), b))
        elif spans and _indent(line) > marker:
            spans[-1] = (spans[-1][0], b)
        else:
            return None
    return spans
