"""How sd-symbolic groups pieces into units (grouping.py, issue 20): an options table whose rows describe their
option at length has each long row as a unit of its own (as a long list item is), so retrieval finds the row of
the option asked about; short rows stay grouped."""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

OPTIONS = """# kiln-plugin

## Options

|Name|Type|Default|Description|
|:--:|:--:|:-----:|:----------|
|**`shelf`**|`{String}`|`top`|The shelf to load first|
|**`cone`**|`{Number}`|`6`|The cone to fire to|
|**`vent`**|`{Boolean\\|String}`|`true`|`true \\|\\| 'top' \\|\\| 'side' \\|\\| false` Open the vents of the kiln. When passing `'top'` only the top vents open during the firing. Passing `false` will keep every vent shut, which leaves the ware darker.|
|**`cool`**|`{Number}`|`12`|Hours the kiln cools with its door shut before it may be opened; a shorter time cracks thick ware, and a longer one only delays the next firing of the kiln and keeps the shelves from the next load.|
|**`log`**|`{Boolean}`|`false`|Write a log of the firing|
"""


def test_a_long_row_is_a_unit_of_its_own_and_short_rows_stay_together():
    units = [
        u for u in build_tree(OPTIONS, SourceMeta("kiln", "kiln.md", "markdown")) if u.chunkType == "table"
    ]
    rows = [(u.claim or "") for u in units]
    vent = [r for r in rows if "`vent`" in r]
    assert len(vent) == 1 and "`cool`" not in vent[0] and "`cone`" not in vent[0], rows
    assert any("`shelf`" in r and "`cone`" in r for r in rows), rows  # short rows grouped with the header
    cool = next(u for u in units if "`cool`" in (u.claim or ""))
    assert "`log`" not in (cool.claim or "")
    assert (cool.title or "").startswith("Columns: ")  # a later part keeps the column names
