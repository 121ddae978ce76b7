"""Constructs of new genres sd-symbolic read as plain words (session 23, eval/dev/dev18–21; issue 20 item 4,
structure that labels truthfully): Pandoc / PHP Markdown Extra definition lists, Hugo shortcodes, heading
attributes, words a man-page renderer broke at a line's end, and bracketed remarks after an indented example
of a plain-text change log. All documents here are invented.
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.sd_symbolic.source_units.hyphenation import line_end_joins
from mrpvm.plugins.sd_symbolic.source_units.outline import read_blocks
from mrpvm.plugins.sd_symbolic.source_units.shortcodes import markup_only, render_shortcodes

API = """---
title: heron mirrors
---

## Create a mirror {#create .endpoint}

```http
POST /api/v3/mirrors HTTP/1.1
```

Create a new mirror of a colony.

**Returns:** [Mirror]({{< relref "entities/mirror" >}})

##### Form data parameters

origin
: {{<required>}} String. The address the colony is copied from.

retry_limit
: Integer. How many times a failed copy is started again. Defaults to 3.

  Copies that fail more often are reported to the owner.

compress
:   Boolean. Whether the copy is compressed on the wire.

{{< hint warning >}}
A mirror is deleted with its colony.
{{< /hint >}}

Mirrors are checked every night.
"""


def _atomic(text: str, name: str):
    return [u for u in units_of(text, name) if u.kuType == "atomic" and u.claim]


def test_a_definition_list_entry_is_a_definition_of_its_term():
    blocks = read_blocks(API)
    terms = {b.title: b for b in blocks if b.kind == "definition"}
    assert set(terms) == {"origin", "retry_limit", "compress"}
    retry = terms["retry_limit"]
    texts = [API[s.start : s.end] for s in retry.segments]
    assert texts[0] == "retry_limit" and retry.segments[0].kind == "term"
    # the definition's later paragraph, indented under its text, belongs to it; the marker is not text
    assert texts[1:] == [
        "Integer.",
        "How many times a failed copy is started again.",
        "Defaults to 3.",
        "Copies that fail more often are reported to the owner.",
    ]
    assert API[terms["compress"].segments[1].start :].startswith("Boolean.")


def test_a_default_in_a_definition_list_stands_under_its_term():
    units = _atomic(API, "mirrors.md")
    default = [u for u in units if "Defaults to 3" in u.claim]
    assert len(default) == 1 and (default[0].sectionTitle or "").endswith("retry_limit")
    assert not any(u.claim.startswith("retry_limit") and ":" in u.claim[:14] for u in units)


def test_compact_and_spaced_definition_lists():
    compact = "## Fields\n\nname\n: The colony's name.\nsize\n: How many nests it has.\n"
    spaced = "## Fields\n\nname\n\n: The colony's name.\n\nsize\n\n: How many nests it has.\n"
    for text in (compact, spaced):
        defs = [(b.title, [text[s.start : s.end] for s in b.segments[1:]]) for b in read_blocks(text)[1:]]
        assert defs == [("name", ["The colony's name."]), ("size", ["How many nests it has."])]
    # a colon opening a line of an ordinary paragraph, with no term over it, opens nothing
    prose = "## Notes\n\nThe ratio is written\n\n: like this, a colon first.\n"
    assert not any(b.kind == "definition" for b in read_blocks(prose.replace("written\n\n", "written.\n\n")))


def test_heading_attributes_are_not_part_of_the_title():
    titles = [b.title for b in read_blocks(API) if b.kind == "heading"]
    assert "Create a mirror" in titles
    assert read_blocks("## Sizes {: #sizes}\n\nText.\n")[0].title == "Sizes"
    # braces that are the title's own words stay
    assert read_blocks("## The {name} placeholder\n\nText.\n")[0].title == "The {name} placeholder"


def test_shortcodes_render_to_what_they_show():
    assert render_shortcodes("{{<required>}} String. The address.") == "(required) String. The address."
    assert render_shortcodes('[Mirror]({{< relref "entities/mirror" >}})') == "[Mirror](entities/mirror)"
    assert render_shortcodes('{{< card-link url="https://x.test/a" caption="GET /api/v3/nests" >}}') == (
        "GET /api/v3/nests"
    )
    assert render_shortcodes("{{< note >}}Back up first.{{< /note >}}") == "Back up first."
    assert render_shortcodes("{{% alert color=warning %}}") == ""
    assert markup_only("{{< hint warning >}}") and markup_only("  {{< /hint >}}")
    assert not markup_only("{{<required>}}") and not markup_only("Text {{ .Title }}")


def test_no_unit_quotes_a_shortcode_and_wrappers_do_not_join_paragraphs():
    units = _atomic(API, "mirrors.md")
    assert not any("{{" in u.claim or "}}" in u.claim for u in units)
    origin = next(u for u in units if "copied from" in u.claim)
    assert "(required)" in origin.claim
    deleted = next(u for u in units if "A mirror is deleted with its colony." in u.claim)
    assert "hint" not in deleted.claim and "warning" not in deleted.claim
    doc = ask("Which address is a colony copied from?", units_of(API, "mirrors.md"))
    assert "{{" not in doc.answer


PAGE = """OWL-KEEPER(8)              System Manager's Manual              OWL-KEEPER(8)

NAME
       owl-keeper - watch the perches of a barn

DESCRIPTION
       owl-keeper  reads  its  settings  at start. The owl-keeper daemon keeps one con\u2010
       nection per perch open and closes idle connections after a minute. When a perch
       is read-only the daemon skips it; a perch becomes read-only when its disk is full
       and the disk is dis\u00ad
       abled. Logs are easily-
       overlooked on busy hosts; a restart clears the owl-
       keeper cache. Both pre-
       and post-processing hooks run for each perch. The IPv6-
       Ready flag is never set.
"""


def test_words_broken_at_a_line_end_are_joined_as_the_document_writes_them():
    broken = {PAGE[h - 6 : r + 8].replace("\n", "|"): keep for h, r, keep in line_end_joins(PAGE)}
    units = _atomic(PAGE, "owl-keeper.8")
    text = " ".join(u.claim for u in units)
    assert "connection per perch" in text  # a typographic hyphen inside a word: the renderer's, dropped
    assert "owl-keeper cache" in text  # a compound the document writes with its hyphen: kept
    assert "easily-overlooked" in text  # an ASCII hyphen without evidence: the author's, kept
    assert "disk is disabled" in text  # a soft hyphen: always the renderer's
    assert "owlkeeper" not in text and "con nection" not in text
    assert "pre- and post-processing" in text  # a suspended hyphen before "and": not joined
    assert "IPv6- Ready" in text  # a capital after the break: left alone
    assert len(broken) == 4


def test_a_typographic_hyphen_between_two_words_of_the_document_is_kept():
    page = "NAME\n       tern - a tool\n\nDESCRIPTION\n       A read\u2010\n       only perch is skipped. Only the read step runs.\n"
    [(_, _, keep)] = line_end_joins(page)
    assert keep
    assert "read-only perch" in " ".join(u.claim for u in _atomic(page, "tern.1"))


NEWS = """Barnowl NEWS                                    -*- outline -*-

* Noteworthy changes in release 3.2 (2024-02-01) [stable]

** Bug fixes

  barnowl -r would lose a perch whose name has a capital letter.
  E.g., before, this command would fail:
    $ barnowl -r Perch7 && barnowl --list
    barnowl: Perch7: no such perch
  [bug present since the beginning]

  When reading an old roost file, barnowl no longer drops the last
  perch of the file.  [bug introduced in barnowl-2.9]

  Scripts run by hooks now see the same exit status as barnowl.  For
  example, 'barnowl --check >/dev/null' now exits with status 1 (error)
  on a missing roost.  [bug present since the beginning]
"""


def test_an_indented_example_ends_where_the_entry_goes_on_in_prose():
    blocks = [b for b in read_blocks(NEWS) if b.kind not in ("heading",)]
    code = [NEWS[b.start : b.end] for b in blocks if b.kind == "code"]
    assert code == ["$ barnowl -r Perch7 && barnowl --list\n    barnowl: Perch7: no such perch"]
    prose = " ".join(NEWS[s.start : s.end] for b in blocks if b.kind == "paragraph" for s in b.segments)
    assert "no longer drops the last" in prose and "exits with status 1" in prose
    units = [u for u in units_of(NEWS, "NEWS") if u.kuType == "atomic" and u.claim]
    dropped = next(u for u in units if "no longer drops the last perch" in u.claim)
    assert "```" not in dropped.claim and "3.2" in (dropped.sectionTitle or "")


PAGE_MD = """---
owners:
- wren
title: "Roosts"
# layout: concept
weight: 20
---

<!-- overview -->

A roost groups the perches of one barn.

<style>
#sidebar li {display: none}
</style>

## When to use roosts

<!--
a note for the editors, not shown
-->
Use a roost when two barns share a keeper.
"""


def test_front_matter_is_the_page_title_and_hidden_html_is_no_text():
    blocks = read_blocks(PAGE_MD)
    assert [(b.kind, b.title) for b in blocks if b.kind == "heading"] == [
        ("heading", "Roosts"),
        ("heading", "When to use roosts"),
    ]
    said = [PAGE_MD[s.start : s.end] for b in blocks for s in b.segments]
    assert said == ["A roost groups the perches of one barn.", "Use a roost when two barns share a keeper."]
    # a "---" rule opening a page without a mapping under it is no front matter
    assert read_blocks("---\n\nText here.\n")[0].segments


PROTOCOL = """= Roost Protocol =

== Lifecycle ==

A perch moves between three states:

   land            settle
  -----> [FREE] ---------> [TAKEN]
                             |
                             | (dusk)
                             v
                          [EMPTY] <-----.
                             |          |
                             `----------'

A perch is freed at dawn.

| state | meaning |
|-------|---------|
| FREE  | open    |

Title
-----

Text under the title.
"""


def test_a_wiki_heading_and_a_drawing_are_read_as_such():
    blocks = read_blocks(PROTOCOL)
    assert [(b.level, b.title) for b in blocks if b.kind == "heading"] == [
        (1, "Roost Protocol"),
        (2, "Lifecycle"),
        (2, "Title"),
    ]
    code = [PROTOCOL[b.start : b.end] for b in blocks if b.kind == "code"]
    assert len(code) == 1 and code[0].startswith("land") and code[0].endswith("`----------'")
    assert [b.kind for b in blocks if b.kind == "table"] == ["table"]  # a table with its separator stays one
    said = [PROTOCOL[s.start : s.end] for b in blocks if b.kind == "paragraph" for s in b.segments]
    assert said == [
        "A perch moves between three states:",
        "A perch is freed at dawn.",
        "Text under the title.",
    ]


def test_a_rule_over_a_paragraph_is_no_drawing():
    for text in (
        "# Barn\n\nIntro.\n\n======\nThe barn opens at dawn.\n",
        "# Barn\n\nIntro.\n\n___________\nThe barn --> the roost.\n",
    ):
        blocks = read_blocks(text)
        assert not any(b.kind == "code" for b in blocks), text
