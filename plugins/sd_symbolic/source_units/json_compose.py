"""A JSON document composed into the node tree PyYAML's composer gives a YAML document (mappings, sequences,
scalars, each with its source marks), so yaml_tree.py reads both with one set of rules.

PyYAML reads much JSON as YAML flow collections, but not all of it: a tab before a value, a key longer than
1,024 characters, the escape `\\/` (YAML 1.1 has none) and a deep nesting (it recurses) each stop it. Composed
here instead, in one pass over the tokens with an explicit stack: strict JSON, plus what people write in
configuration files read as JSON (`//` and `/* */` comments, a trailing comma before `]` or `}`: JSONC);
NaN and Infinity as Python's json reads them. A key written twice is kept twice (each states its value).
Any other text, a collection nested deeper than the reading goes (max_depth), or anything after the top
collection but blanks and comments is no document: None. A byte order mark is skipped, offsets kept.
"""

from __future__ import annotations

import json

import yaml  # type: ignore[import-untyped]
from mrpvm.plugins.sdk.patterns import lazy_pattern

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_SKIP = lazy_pattern(r"(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)*")
_STRING = lazy_pattern(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_WORD = lazy_pattern(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|NaN|-?Infinity")


def looks_like_json(text: str) -> bool:
    """The first character but blanks, comments and a byte order mark opens an object or an array."""
    at = _skip(text, 0)
    return text[at : at + 1] in ("{", "[")


def compose_json(text: str, max_depth: int) -> yaml.CollectionNode | None:
    """The document's top collection as a node tree (see the module docstring), or None."""
    pos = _skip(text, 0)
    if text[pos : pos + 1] not in ("{", "["):
        return None
    stack: list[yaml.CollectionNode] = []
    keys: list[yaml.ScalarNode | None] = []  # per open mapping: the key awaiting its value
    top: yaml.CollectionNode | None = None
    last = ""  # what came last in the open collection: open, value, comma, key, colon
    n = len(text)
    while pos < n:
        ch = text[pos]
        parent = stack[-1] if stack else None
        in_map = isinstance(parent, yaml.MappingNode)
        wants_value = parent is None and top is None or last in ("colon", "comma", "open") and not in_map
        if ch in "{[":
            if not (wants_value or last == "colon") or len(stack) >= max_depth:
                return None
            mark = _mark(pos)
            node: yaml.CollectionNode = (
                yaml.MappingNode(_MAP, [], mark, mark, flow_style=True)
                if ch == "{"
                else yaml.SequenceNode(_SEQ, [], mark, mark, flow_style=True)
            )
            _attach(parent, keys, node)
            stack.append(node)
            keys.append(None)
            last = "open"
            pos += 1
        elif ch in "}]":
            if parent is None or (ch == "}") != in_map or last in ("key", "colon"):
                return None  # a close of the other kind, or a key without its value
            pos += 1
            parent.end_mark = _mark(pos)
            stack.pop()
            keys.pop()
            last = "value"
            if not stack:
                top = parent
        elif ch == "," and parent is not None and last == "value":
            last = "comma"
            pos += 1
        elif ch == ":" and last == "key":
            last = "colon"
            pos += 1
        else:
            scalar = _scalar(text, pos) if parent is not None else None
            if scalar is None:
                return None
            if in_map and last in ("open", "comma"):
                if scalar.style != '"':
                    return None  # a key is a string
                keys[-1] = scalar
                last = "key"
            elif wants_value or last == "colon":
                _attach(parent, keys, scalar)
                last = "value"
            else:
                return None
            pos = scalar.end_mark.index
        pos = _skip(text, pos)
    return top if top is not None and not stack else None


def _attach(parent: yaml.CollectionNode | None, keys: list[yaml.ScalarNode | None], node: yaml.Node) -> None:
    if isinstance(parent, yaml.MappingNode):
        parent.value.append((keys[-1], node))
        keys[-1] = None
    elif parent is not None:
        parent.value.append(node)


def _scalar(text: str, pos: int) -> yaml.ScalarNode | None:
    string = _STRING.match(text, pos)
    if string is not None:
        try:
            value = json.loads(string.group(), strict=False)  # a tab inside a string: as json reads it
        except ValueError:
            return None  # an invalid escape
        return yaml.ScalarNode(_STR, value, _mark(pos), _mark(string.end()), style='"')
    word = _WORD.match(text, pos)
    if word is None:
        return None
    return yaml.ScalarNode(_STR, word.group(), _mark(pos), _mark(word.end()), style=None)


def _skip(text: str, pos: int) -> int:
    """Past the blanks and comments at pos."""
    skipped = _SKIP.match(text, pos)
    return skipped.end() if skipped is not None else pos


def _mark(index: int) -> yaml.Mark:
    return yaml.Mark("<json>", index, 0, 0, None, None)
