"""The shortest span that answers (issue 20, too-long answers), on a Markdown document written here: a table
cell with an escaped pipe (`\\|`, GitHub's way to write a pipe inside a cell) stays one cell, so the row is
read with its column names; a long row is quoted by the field asked for, under the row's key; a header block
("Key: value Key: value …", as RFCs, PEPs and package metadata open) is quoted by the field asked for."""

from __future__ import annotations

import json

import msgspec
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs_plugin
from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.plugins.sdk.text import table_cells
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit

KILN = """Project: kiln-scheduler Version: 2.4.1 Release-Manager: Dana Whitlock <dana@example.org> \
Maintainers: Ivo Brandt <ivo@example.org>, Mira Holt <mira@example.org> Status: Stable \
Mailing-List: kiln-users@example.org Created: 03-Mar-2019 Post-History: 04-Mar-2019, 09-Apr-2019 \
Homepage: https://example.org/kiln/scheduler/overview.html

# Kiln scheduler

Kiln schedules firings of pottery kilns.

## Options

| Name | Type | Default | Description |
|---|---|---|---|
| **`glaze`** | `{'matte'\\|'gloss'\\|'satin'\\|'raw'}` | `'matte'` | Chooses the finish of every shelf \
fired in the batch. Setting it to `'raw'` skips the glazing pass entirely, which shortens a firing by a \
quarter of an hour but leaves the clay porous. Shelves that were glazed before keep their finish, since \
the glazing pass only ever runs on bare clay. |
| **`shelves`** | `{Number}` | `4` | How many shelves a batch holds. |
"""


def units() -> list[KnowledgeUnit]:
    return build_tree(KILN, SourceMeta("kiln", "kiln.md", "text", created_at="t0"))


def answer(question: str) -> str:
    intent = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    payload = {
        "intent": msgspec.to_builtins(intent),
        "evidence": msgspec.to_builtins([u for u in units() if u.kuType == "atomic"]),
        "guidance": [],
        "allowDecompose": False,
    }
    req = {"op": "solve", "prompt": question, "context": [], "payload": payload}
    return parse_document(gs_plugin.handle(json.dumps(req).encode()), "solve").answer


def test_an_escaped_pipe_stays_inside_its_cell():
    assert table_cells(r"| **`glaze`** | `{'matte'\|'gloss'}` | `'matte'` |") == [
        "**`glaze`**",
        "`{'matte'|'gloss'}`",
        "`'matte'`",
    ]


def test_a_long_row_is_read_field_by_field_under_its_key():
    rows = [s.text for s in split_units(units()) if s.text.startswith("**`glaze`**")]
    assert "**`glaze`** — Default: `'matte'`" in rows
    assert len(rows) == 3  # Type, Default, Description: each under the row's key


def test_the_default_asked_for_is_quoted_from_its_row_alone():
    text = answer("What is the default value of the glaze option?")
    assert "'matte'" in text and "glaze" in text
    assert len(text) <= 120, text


def test_a_header_block_is_quoted_by_the_field_asked_for():
    text = answer("Who is the release manager of kiln-scheduler?")
    assert "Dana Whitlock" in text
    assert len(text) <= 120, text
    assert "Ivo Brandt" not in text


def test_a_header_field_is_about_the_record_its_first_field_names():
    field = next(s for s in split_units(units()) if s.text.startswith("Release-Manager:"))
    assert field.text.rstrip(".") == "Release-Manager: Dana Whitlock <dana@example.org>"
    assert {"project", "kiln-schedul"} & field.carried  # "Project: kiln-scheduler"


def test_prose_with_a_label_or_two_is_no_header_block():
    prose = (
        "Note: kiln keeps every shelf in the queue until the batch is fired, and the scheduler never drops a "
        "shelf on its own, even when the queue is full. Warning: a shelf that was glazed twice is fired at the "
        "lower temperature of the two glazes, which the scheduler reads from the batch file before every "
        "firing starts, so a wrong batch file silently changes the finish of every shelf in the batch."
    )
    meta = SourceMeta("n", "n.md", "text", created_at="t0")
    texts = [s.text for s in split_units([u for u in build_tree(prose, meta) if u.kuType == "atomic"])]
    assert not any(t.startswith("Warning:") and len(t) < 60 for t in texts)
    assert any("Warning: a shelf that was glazed twice" in t for t in texts)
