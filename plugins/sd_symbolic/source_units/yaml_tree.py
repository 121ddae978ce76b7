"""A YAML document (an API definition, a compose file, a manifest, a workflow, a chart's values) read as its
tree: the keys carry the meaning, so each mapping is a unit headed by its key path.

Read as Markdown or plain text, a YAML file's lines ran into each other across its structure ("security: 1.
petstore_auth: … /pet/findByStatus:"), a nested mapping's unit lost the key it stands under (`schema:` cut
from the parameter it describes) and a list under its key was read as a Markdown list. Read here by PyYAML's
composer (the safe loader: nodes with their source marks, nothing constructed; yaml_shape.py says which text
is a tree), as the text a reader of the tree would write, each of its characters recording the source span
it shows (html_page.Page), so units' offsets slice the source as every reader's do:
- each mapping's own leaves are a definition titled by its key, under its parents' keys (the unit's heading
  is the path "paths > /pets/{id} > get > parameters > id"): a scalar leaf the field statement `key: value`,
  a list of scalars joined under its key (`required: name, size`), a multi-word text (sdk.text.prose_value:
  by the value's shape, never its key) its sentences, without its key; its texts first, then its fields,
  each in written order (a record's prose, then its fields, as yaml_entries.py and gs-symbolic's
  record_fields.py read records); in a dictionary, whose values are all words (OAuth scopes, a glossary),
  each text keeps its key before it;
- in a mapping with leaves of its own, a small leaf mapping without text (at most MAX_INLINE leaves) is
  stated in its unit, its key before each of its own (`schema.default: available`): a record's detail; a
  mapping of mappings only is a collection of named things, each a unit of its own;
- a mapping with further collections is also a heading over them, one level down; a list of mappings is a
  heading over its items, each a sibling unit labelled by its first value when short (`- name: web`), else
  its first key; a stream's documents are such items;
- anchors and aliases are resolved (a merge key `<<` gives a mapping the entries it does not write
  itself), an alias's text shown at the place that refers to it; a literal block (`|`) of lines that end
  no sentence is code.
A JSON document (an API schema, a settings file with descriptions, a package manifest) is composed into
the same nodes by json_compose.py and read by the same rules. Any other text is None here, and the other
readers read it as before. Bad input is bounded: aliases expand
at most ALIAS_BUDGET nodes beyond the source's own (a "billion laughs" stays small); a tree deeper than
MAX_DEPTH, or than the composer can nest, a tab indent, invalid YAML are no tree.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import yaml  # type: ignore[import-untyped]
from mrpvm.plugins.sdk.text import prose_value

from .grouping import MAX_DEFINITION_UNIT_CHARS
from .page_text import Page
from .segments import Block, Segment, sentences_in, split_long
from .yaml_shape import MAX_DEPTH, MERGE, compose_tree, inline, is_text, leafy, texts_only
from .yaml_shape import label as label_of

_CODE_END = (".", "!", "?", ":")
MAX_LABEL_WORDS = 8  # a list item's first value labels it when it is this short
SEARCH_SLACK = 256  # a scalar's word is looked for this far past the one before it (escapes: not found)
ALIAS_BUDGET = 10_000  # nodes an alias may add to the reading beyond the source's own


def read_yaml(text: str) -> Page | None:
    """The reading of a YAML document (see the module docstring), or None when it is not one."""
    docs = compose_tree(text)
    if docs is None:
        return None
    out = _Reading(text)
    if len(docs) == 1:
        out.body(*out.split(docs[0], None), 0)
        return out.page()
    for number, doc in enumerate(docs, 1):  # a stream: its documents as a list's items
        label, span = _item_label(doc, number, None)
        out.heading(label, span, 1)
        out.body(*out.split(doc, None), 1)
    return out.page()


class _TreePage(Page):
    """A reading whose characters need not stand in the source's order (a mapping's texts before its fields, a
    merged entry shown at its merge key): a span of it shows the source from its first to its last character
    there."""

    def source_span(self, a: int, b: int) -> tuple[int, int]:
        first, last = super().source_span(a, b)  # its first and last character's
        inside = slice(max(a, 0), min(b, len(self.text)))
        if inside.stop <= inside.start:
            return first, last
        return min(first, min(self._starts[inside])), max(last, max(self._ends[inside]))


_Site = tuple[int, int] | None  # where an alias's text is shown: the span that refers to it
_Child = tuple[str, yaml.Node, _Site, tuple[int, int]]  # (label, node, site, the span that shows the label)


@dataclass(slots=True)
class _Part:
    span: tuple[int, int]  # in the reading's text
    kind: str  # field | prose | code


@dataclass(slots=True)
class _Pending:
    kind: str  # heading | definition
    title: str
    level: int = 0
    term: tuple[int, int] | None = None
    parts: list[_Part] = field(default_factory=list)


class _Reading:
    """The text of the reading, the source span of each of its characters, and its blocks."""

    def __init__(self, source: str):
        self.source = source
        self.chunks: list[str] = []
        self.size = 0
        self.starts = array("q")
        self.ends = array("q")
        self.pending: list[_Pending] = []
        self.budget = ALIAS_BUDGET

    # ------------------------------------------------------------------ text
    def put(self, s: str, a: int, b: int) -> tuple[int, int]:
        """Write s, shown from the source span [a, b); its span in the reading."""
        at = self.size
        self.chunks.append(s)
        self.size += len(s)
        self.starts.extend([a] * len(s))
        self.ends.extend([b] * len(s))
        return at, self.size

    def close(self, s: str) -> None:
        """A separator after what was written, shown where that ends in the source."""
        at = self.ends[-1] if self.size else 0
        self.put(s, at, at)

    def put_value(self, node: yaml.ScalarNode, site: _Site) -> tuple[int, int]:
        """A scalar's value, each word shown from where the source writes it (an alias's at its site)."""
        value = node.value
        if site is not None:
            return self.put(value, *site)
        a, b = node.start_mark.index, node.end_mark.index
        at = self.size
        pos = a
        for k, word in enumerate(value.split(" ")):
            if k:
                self.put(" ", pos, pos)
            lines = word.split("\n")
            for m, piece in enumerate(lines):
                if m:
                    self.put("\n", pos, pos)
                # the word stands right after the one before it, past blanks, a line break, an indent
                found = self.source.find(piece, pos, min(b, pos + len(piece) + SEARCH_SLACK)) if piece else -1
                if found < 0:
                    self.put(piece, pos, b)
                else:
                    self.put(piece, found, found + len(piece))
                    pos = found + len(piece)
        return at, self.size

    def page(self) -> Page:
        text = "".join(self.chunks)
        blocks: list[Block] = []
        for p in self.pending:
            index = len(blocks)
            if p.kind == "heading":
                a, b = p.term or (0, 0)
                blocks.append(Block("heading", a, b, level=p.level, title=p.title))
                continue
            segments = [Segment(*p.term, "term", index)] if p.term else []
            for part in p.parts:
                a, b = part.span
                if part.kind == "prose":
                    segments += sentences_in(text, a, b, index)
                elif part.kind == "code":
                    segments.append(Segment(a, b, "code", index))
                else:
                    segments += [
                        Segment(x, y, "sentence", index, field=True) for x, y in split_long(text, a, b)
                    ]
            if segments:
                blocks.append(
                    Block("definition", segments[0].start, segments[-1].end, title=p.title, segments=segments)
                )
        return _TreePage(text, blocks, self.starts, self.ends)

    # ------------------------------------------------------------------ tree
    def entries(self, node: yaml.MappingNode, site: _Site) -> list[tuple[str, yaml.Node, yaml.Node, _Site]]:
        """(label, key, value, site) of a mapping's entries: a merge key's mappings first, for the keys the
        mapping does not write itself (shown at the merge key), then its own."""
        own = [(k, v) for k, v in node.value if k.tag != MERGE]
        written = {label_of(k) for k, _ in own}
        out: list[tuple[str, yaml.Node, yaml.Node, _Site]] = []
        for k, v in node.value:
            if k.tag != MERGE:
                continue
            merged = v.value if isinstance(v, yaml.SequenceNode) else [v]
            for m in merged:
                if isinstance(m, yaml.MappingNode) and self.spend(m):
                    here = site or (k.start_mark.index, k.end_mark.index)
                    out += [e for e in self.entries(m, here) if e[0] not in written]
        for k, v in own:
            out.append((label_of(k), k, v, site if site is not None else _alias_site(k, v)))
        return out

    def spend(self, node: yaml.Node) -> bool:
        """Whether an alias to node may be read again: ALIAS_BUDGET nodes in all."""
        if self.budget < 0:
            return False
        self.budget -= _size(node)
        return self.budget >= 0

    def split(self, node: yaml.Node, site: _Site) -> tuple[list[_Part], list[_Child]]:
        """A collection's own leaves (written now: scalars, lists of scalars, small leaf mappings inlined) and
        its other children, each with its label and the span that shows it."""
        own: list[_Part] = []
        children: list[_Child] = []
        if isinstance(node, yaml.MappingNode):
            entries = self.entries(node, site)
            texts = [v for _, _, v, _ in entries if isinstance(v, yaml.ScalarNode)]
            # a dictionary (every value a text: scopes, a glossary) keeps each key before its text; a record's
            # text (a description beside short fields) stands alone; a text here is words, not one token
            keyed = (
                len(texts) >= 2
                and len(texts) == len(entries)
                and all(len(v.value.split()) > 1 for v in texts)
                and any(is_text(v) for v in texts)
            )
            # a record's details: a small leaf mapping is stated in the unit of a mapping with leaves of its own
            # (a parameter's `schema`); a mapping of mappings only is a collection of named things, one unit each
            leaves = any(leafy(v) for _, _, v, _ in entries)
            # its texts first, then its fields, each in written order: what it says of itself, then the rest
            first = [e for e in entries if not keyed and texts_only(e[2])]
            for label, key, value, at in first + [e for e in entries if keyed or not texts_only(e[2])]:
                key_span = at or (key.start_mark.index, key.end_mark.index)
                if (
                    at is not None
                    and at != site
                    and isinstance(value, yaml.CollectionNode)
                    and not self.spend(value)
                ):
                    continue
                if isinstance(value, yaml.CollectionNode) and leaves and inline(value):
                    for sub, sub_key, sub_value, sub_at in self.entries(value, at):
                        own += self.leaf(f"{label}.{sub}", sub_key, sub_value, sub_at)
                elif leafy(value):
                    own += self.leaf(label, key, value, at, keyed)
                else:
                    children.append((label, value, at, key_span))
        elif isinstance(node, yaml.SequenceNode):
            own += self.listed([v for v in node.value if isinstance(v, yaml.ScalarNode)], site)
            for k, item in enumerate(node.value):
                if isinstance(item, yaml.CollectionNode):
                    at = site if site is not None else _alias_site(node, item)
                    if at is not None and at != site and not self.spend(item):
                        continue
                    label, span = _item_label(item, k + 1, at)
                    children.append((label, item, at, span))
        return own, children

    def body(self, own: list[_Part], children: list[_Child], depth: int) -> None:
        """A collection's blocks: its own leaves, then each child's own leaves as a definition titled by its
        key (under this collection's heading: the key path), then each child with children of its own as a
        heading over them, one level down."""
        self.define("", None, own)
        later: list[tuple[str, tuple[int, int], list[_Child]]] = []
        for label, value, at, span in children:
            term = self.put(label, *span)
            self.put("\n", span[1], span[1])
            parts, grandchildren = self.split(value, at)
            self.define(label, term, parts)
            if grandchildren and depth < MAX_DEPTH:
                later.append((label, span, grandchildren))
        for label, span, grandchildren in later:
            self.heading(label, span, depth + 1)
            self.body([], grandchildren, depth + 1)

    def define(self, label: str, term: tuple[int, int] | None, parts: list[_Part]) -> None:
        """A mapping's leaves as a definition; when its texts and fields together are longer than a unit holds
        (grouping.MAX_DEFINITION_UNIT_CHARS), its fields a second one under the same key: a unit is cut where
        the texts end, not among the text's sentences."""
        texts = [p for p in parts if p.kind == "prose"]
        rest = [p for p in parts if p.kind != "prose"]
        if texts and rest and sum(p.span[1] - p.span[0] for p in parts) > MAX_DEFINITION_UNIT_CHARS:
            self.pending.append(_Pending("definition", label, term=term, parts=texts))
            self.pending.append(_Pending("definition", label, parts=rest))
        elif parts:
            self.pending.append(_Pending("definition", label, term=term, parts=parts))

    def heading(self, label: str, span: tuple[int, int], level: int) -> None:
        term = self.put(label, *span)
        self.put("\n", span[1], span[1])
        self.pending.append(_Pending("heading", label, level=level, term=term))

    def leaf(
        self, label: str, key: yaml.Node, value: yaml.Node, site: _Site, keyed: bool = False
    ) -> list[_Part]:
        """A scalar, or a list of scalars, under its key."""
        if isinstance(value, yaml.CollectionNode) and not value.value:  # `key: []`, `key: {}`: as written
            k = site or (key.start_mark.index, key.end_mark.index)
            shown = self.source[value.start_mark.index : value.end_mark.index] if site is None else "[]"
            a = self.put(f"{label}: ", *k)[0]
            b = self.put(shown, *(site or (value.start_mark.index, value.end_mark.index)))[1]
            self.close("\n")
            return [_Part((a, b), "field")]
        if isinstance(value, yaml.SequenceNode):
            return self.listed(list(value.value), site, label, key)
        if not isinstance(value, yaml.ScalarNode) or not value.value.strip():
            return []
        text = value.value.strip()
        if (
            value.style == "|"
            and "\n" in text
            and not any(ln.rstrip().endswith(_CODE_END) for ln in text.split("\n"))
        ):
            span = self.put_value(value, site)
            self.close("\n")
            return [_Part(span, "code")]
        if prose_value(text):
            a = (
                self.put(f"{label}: ", *(site or (key.start_mark.index, key.end_mark.index)))[0]
                if keyed
                else self.size
            )
            span = (a, self.put_value(value, site)[1])
            self.close("\n\n")
            return [_Part(span, "prose")]
        k = site or (key.start_mark.index, key.end_mark.index)
        a = self.put(f"{label}: ", *k)[0]
        b = self.put_value(value, site)[1]
        self.close("\n")
        return [_Part((a, b), "field")]

    def listed(
        self, items: list[yaml.Node], site: _Site, label: str = "", key: yaml.Node | None = None
    ) -> list[_Part]:
        """A list of scalars: each a text of its own when all are texts, else one field joining them."""
        values = [v for v in items if isinstance(v, yaml.ScalarNode) and v.value.strip()]
        if not values:
            return []
        if all(prose_value(v.value.strip()) for v in values):
            parts = []
            for v in values:
                span = self.put_value(v, site)
                self.close("\n\n")
                parts.append(_Part(span, "prose"))
            return parts
        if key is not None:
            k = site or (key.start_mark.index, key.end_mark.index)
            a = self.put(f"{label}: ", *k)[0]
        else:
            a = self.size
        for n, v in enumerate(values):
            if n:
                self.close(", ")
            b = self.put_value(v, site)[1]
        self.close("\n")
        return [_Part((a, b), "field")]


def _item_label(item: yaml.Node, number: int, site: _Site) -> tuple[str, tuple[int, int]]:
    """A list item's label: its first value when that is short (`- name: web` → web), else its first key
    (`- api_key: []`), else its number."""
    if isinstance(item, yaml.MappingNode) and item.value:
        k, v = item.value[0]
        words = v.value.split() if isinstance(v, yaml.ScalarNode) and "\n" not in v.value.strip() else []
        if 0 < len(words) <= MAX_LABEL_WORDS:
            return " ".join(v.value.split()), site or (item.start_mark.index, v.end_mark.index)
        if isinstance(k, yaml.ScalarNode) and k.tag != MERGE:
            return label_of(k), site or (k.start_mark.index, k.end_mark.index)
    return f"[{number}]", site or (item.start_mark.index, item.start_mark.index)


def _alias_site(parent: yaml.Node, value: yaml.Node) -> _Site:
    """An alias's value stands where its anchor is, before what refers to it: shown at the referring node."""
    if value.start_mark.index < parent.start_mark.index:
        return parent.start_mark.index, parent.end_mark.index
    return None


def _size(node: yaml.Node) -> int:
    """The nodes an alias to node would read (an alias inside counted again), capped past ALIAS_BUDGET."""
    total = 0
    stack = [node]
    while stack and total <= ALIAS_BUDGET:
        n = stack.pop()
        total += 1
        if isinstance(n, yaml.MappingNode):
            stack += [v for _, v in n.value]
        elif isinstance(n, yaml.SequenceNode):
            stack += n.value
    return total
