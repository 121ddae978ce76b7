"""Which text is a YAML tree (yaml_tree.py reads it), and the shapes of its nodes the reading asks about.

A text is one when its line shape is a YAML file's (its first content line a key line at the margin, a share of
its lines key or item lines: checked before composing) and PyYAML's safe composer reads it, every document a
block collection with nested collections and MIN_KEYS keys in all: not Markdown with front matter (a scalar
document follows it), not a flat `key: value` list (the other readers read those), not JSON (a flow mapping).
"""

from __future__ import annotations

import yaml  # type: ignore[import-untyped]
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import prose_value

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when built: marks count characters too
MERGE = "tag:yaml.org,2002:merge"
# a block mapping's key line (`key:`, `key: value`, `- key: value`, a quoted key): what a YAML file is made of
_KEY_LINE = lazy_pattern(r"^ *(?:- +)*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s#'\"\[\]{}>|*&!%@`][^\n#]*?):(?: |$)")
_ITEM_LINE = lazy_pattern(r"^ *- ")
MIN_KEYS = 6  # a tree of fewer keys is a short note, read by the other readers
MIN_KEY_SHARE = 0.4  # of the non-blank, non-comment lines: key or item lines
MAX_INLINE = 4  # a leaf mapping without prose of at most this many leaves is stated in its parent's unit
MAX_DEPTH = 64


def looks_like_yaml(text: str) -> bool:
    """The line shape of a YAML file, checked before composing: its first content line is a key line and a
    share of its lines are key or item lines. One pass over the lines."""
    keys = content = 0
    first = True
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
        is_key = _KEY_LINE.match(line) is not None
        if first:
            if not is_key or line.startswith(" "):
                return False
            first = False
        content += 1
        keys += is_key or _ITEM_LINE.match(line) is not None
    return content > 0 and keys >= MIN_KEY_SHARE * content


def compose_tree(text: str) -> list[yaml.Node] | None:
    """The documents of a YAML tree (see yaml_tree's docstring: a block collection each, some nesting, MIN_KEYS
    keys, no deeper than MAX_DEPTH), composed by the safe loader; None for any other text."""
    if not looks_like_yaml(text):
        return None
    try:
        docs = [d for d in yaml.compose_all(text, Loader=_LOADER) if d is not None]
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError):
        return None  # invalid, or nested deeper than the composer recurses
    return docs if docs and tree_shaped(docs) else None


def tree_shaped(docs: list[yaml.Node]) -> bool:
    """Every document a block collection, some collection nested in another, MIN_KEYS keys in all, no
    deeper than MAX_DEPTH: one walk over the distinct nodes (an alias's node is walked once)."""
    seen: set[int] = set()
    keys = 0
    nested = False
    for doc in docs:
        if not isinstance(doc, yaml.CollectionNode) or doc.flow_style:
            return False
        stack: list[tuple[yaml.Node, int]] = [(doc, 0)]
        while stack:
            node, depth = stack.pop()
            if id(node) in seen or not isinstance(node, yaml.CollectionNode):
                continue
            seen.add(id(node))
            if depth > MAX_DEPTH:
                return False
            nested |= depth > 0
            if isinstance(node, yaml.MappingNode):
                keys += len(node.value)
                stack += [(v, depth + 1) for _, v in node.value]
            else:
                stack += [(v, depth + 1) for v in node.value]
    return nested and keys >= MIN_KEYS


def label(key: yaml.Node) -> str:
    if isinstance(key, yaml.ScalarNode):
        return " ".join(key.value.split()) or "''"
    return "?"


def is_text(node: yaml.ScalarNode) -> bool:
    return prose_value(node.value.strip())


def leafy(node: yaml.Node) -> bool:
    """A scalar or a list of scalars: a leaf of its mapping's unit."""
    return not isinstance(node, yaml.CollectionNode) or scalars(node)


def texts_only(node: yaml.Node) -> bool:
    """A text, or a list of texts only (a description written as a sequence of sentences)."""
    values = node.value if isinstance(node, yaml.SequenceNode) else [node]
    return bool(values) and all(isinstance(v, yaml.ScalarNode) and is_text(v) for v in values)


def scalars(node: yaml.CollectionNode) -> bool:
    return isinstance(node, yaml.SequenceNode) and all(isinstance(v, yaml.ScalarNode) for v in node.value)


def leaf_mapping(node: yaml.Node) -> bool:
    """A mapping of scalars and lists of scalars only (a merge key aside)."""
    return isinstance(node, yaml.MappingNode) and all(
        k.tag == MERGE or isinstance(v, yaml.ScalarNode) or (isinstance(v, yaml.SequenceNode) and scalars(v))
        for k, v in node.value
    )


def inline(node: yaml.CollectionNode) -> bool:
    """A small leaf mapping with no text: stated in its parent's unit."""
    if not leaf_mapping(node) or not 0 < len(node.value) <= MAX_INLINE:
        return False
    for k, v in node.value:
        if k.tag == MERGE:
            return False
        values = v.value if isinstance(v, yaml.SequenceNode) else [v]
        if any(isinstance(x, yaml.ScalarNode) and prose_value(x.value.strip()) for x in values):
            return False
    return True
