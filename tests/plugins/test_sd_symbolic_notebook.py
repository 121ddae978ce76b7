"""sd-symbolic reads a Jupyter notebook (.ipynb JSON) as the Markdown it is written in: markdown cells as written,
code cells fenced in the notebook's language, text outputs as short output blocks, HTML/images/errors left out
(issue 20 item 4). Notebooks invented; truncated JSON, other JSON and Markdown that mentions notebooks keep their
readers.
"""

from __future__ import annotations

import json
from typing import Any

from mrpvm.plugins.sd_symbolic.source_units.notebook import MAX_OUTPUT_CHARS, notebook_markdown
from mrpvm.plugins.sd_symbolic.source_units.outline import read_source
from reader_units import atomic_units


def _lines(text: str) -> list[str]:
    """A cell's source as nbformat writes it: a list of lines, each with its newline but the last."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


def _md(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": _lines(text)}


def _code(text: str, *outputs: dict[str, Any]) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": list(outputs),
        "source": _lines(text),
    }


def _notebook(cells: list[dict[str, Any]], metadata: dict[str, Any] | None = None) -> str:
    if metadata is None:
        metadata = {
            "kernelspec": {"display_name": "Julia 1.11", "language": "julia", "name": "julia-1.11"},
            "language_info": {"file_extension": ".jl", "name": "julia", "version": "1.11.0"},
        }
    return json.dumps(
        {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}, indent=1, sort_keys=True
    )


TIDES = _notebook(
    [
        _md("# Reading Tide Gauges"),
        _md(
            "## Smoothing the record\n"
            "\n"
            "A tide gauge samples the water level every six minutes.\n"
            "The `smooth` function averages each reading with its four neighbours, which removes wave chop."
        ),
        _code(
            "levels = smooth(raw_levels)\nlength(levels)",
            {
                "data": {"text/plain": ["240"]},
                "execution_count": 1,
                "metadata": {},
                "output_type": "execute_result",
            },
        ),
        _md(
            "## Finding high water\n\nThe `crest` function returns the time of each high water in the record."
        ),
        _code(
            "crests = crest(levels)\nshow(crests)",
            {
                "data": {
                    "image/png": "iVBORw0KGgo" * 200,
                    "text/html": ["<table><tr><td>06:12</td></tr></table>"],
                    "text/plain": ["2-element Vector{Time}:\n", " 06:12\n", " 18:37"],
                },
                "metadata": {},
                "output_type": "display_data",
            },
            {"name": "stdout", "output_type": "stream", "text": ["two crests found\n"]},
            {
                "data": {"image/png": "iVBORw0KGgo", "text/plain": ["<Plot of 2 series at 0x7f3a>"]},
                "metadata": {},
                "output_type": "display_data",
            },
            {
                "ename": "BoundsError",
                "evalue": "attempt to access index 3",
                "output_type": "error",
                "traceback": ["\u001b[91mBoundsError\u001b[39m stacktrace line"],
            },
        ),
    ]
)


def _read(text: str) -> str:
    """The text sd-symbolic reads a source's blocks from (every unit slices it)."""
    return read_source(text)[0]


def _units(text: str) -> list:
    return atomic_units(text, "tides.ipynb")


def test_a_markdown_cell_is_read_as_written_not_as_escaped_json_lines() -> None:
    units = _units(TIDES)
    found = [u for u in units if "averages each reading with its four neighbours" in (u.claim or "")]
    assert found
    assert '\\n"' not in found[0].claim and '"source"' not in found[0].claim
    assert found[0].heading == "Smoothing the record"
    assert not any('"cell_type"' in (u.claim or "") or '"metadata"' in (u.claim or "") for u in units)


def test_code_cells_are_fenced_in_the_notebook_s_language() -> None:
    text = _read(TIDES)
    assert "```julia\nlevels = smooth(raw_levels)\nlength(levels)\n```" in text
    assert text.index("four neighbours") < text.index("smooth(raw_levels)") < text.index("Finding high water")


def test_text_outputs_are_short_blocks_and_rich_outputs_and_errors_are_left_out() -> None:
    text = _read(TIDES)
    assert "```output\n240\n```" in text
    assert "```output\n2-element Vector{Time}:\n 06:12\n 18:37\n```" in text
    assert "two crests found" in text
    for rich in ("<table>", "iVBORw0KGgo", "BoundsError", "\u001b", "<Plot of 2 series"):
        assert rich not in text


def test_a_source_written_as_one_string_reads_like_one_written_as_lines() -> None:
    as_lines = _notebook([_md("# Sails\n\nA jib is set forward of the mast."), _code("hoist(:jib)")])
    as_string = json.dumps(
        {
            "cells": [
                {
                    "cell_type": "markdown",
                    "metadata": {},
                    "source": "# Sails\n\nA jib is set forward of the mast.",
                },
                {"cell_type": "code", "metadata": {}, "outputs": [], "source": "hoist(:jib)"},
            ],
            "metadata": json.loads(as_lines)["metadata"],
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    assert _read(as_string) == _read(as_lines)
    assert _read(as_string) == "# Sails\n\nA jib is set forward of the mast.\n\n```julia\nhoist(:jib)\n```\n"


def test_the_language_falls_back_to_the_kernelspec_or_to_none() -> None:
    cells = [_md("Brine is weighed before the boil."), _code("weigh brine")]
    kernel_only = _notebook(cells, {"kernelspec": {"language": "R", "name": "ir"}})
    assert "```r\nweigh brine\n```" in _read(kernel_only)
    bare = _notebook(cells, {})
    assert "```\nweigh brine\n```" in _read(bare)
    odd = _notebook(cells, {"kernelspec": {"language": "not a `name`"}, "language_info": "python"})
    assert "```\nweigh brine\n```" in _read(odd)


def test_a_fence_inside_a_cell_gets_a_longer_fence() -> None:
    text = _read(_notebook([_md("Docstrings hold examples."), _code('doc = """\n```\nx\n```\n"""')]))
    assert '````julia\ndoc = """\n```\nx\n```\n"""\n````' in text


def test_a_five_megabyte_output_is_cut_to_a_short_block() -> None:
    huge_line = "7" * 5_000_000
    many_lines = [f"row {i}\n" for i in range(200_000)]
    nb = _notebook(
        [
            _md("The sensor dump follows."),
            _code("dump()", {"name": "stdout", "output_type": "stream", "text": huge_line}),
            _code("rows()", {"name": "stdout", "output_type": "stream", "text": many_lines}),
        ]
    )
    text = _read(nb)
    assert len(text) < 3 * MAX_OUTPUT_CHARS
    assert "row 0\n" in text and "row 199999" not in text
    assert _units(nb)


def test_what_is_not_a_notebook_keeps_its_reader() -> None:
    truncated = TIDES[: len(TIDES) // 2]
    other_json = json.dumps({"cells": [{"id": 1}], "name": "spreadsheet export", "rows": 3})
    format_as_text = json.dumps({"cells": [], "nbformat": "four"})
    markdown = '# Notebooks\n\nA notebook file holds "cells" and an "nbformat" number.\n'
    no_cells = _notebook([_md("   "), _code("")])
    for text in (truncated, other_json, format_as_text, markdown, no_cells, "{", "[]"):
        assert notebook_markdown(text) is None
    assert read_source(truncated)[0] == truncated
    assert _units(truncated)
