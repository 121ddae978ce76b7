"""An answer passage is a passage, not a page (gs_symbolic/windows.py, issue 20): a window of several
sentences is at most MAX_WINDOW_CHARS long; a single sentence may be longer."""

from __future__ import annotations

from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.plugins.gs_symbolic.windows import MAX_WINDOW_CHARS, windows
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

KILN = """# Kiln firing

The bisque firing of the west kiln runs slowly through the early stages, because the water that remains \
bound in the clay body has to leave the ware before the temperature climbs past the boiling point of water.

During the second stage the organic matter that the clay carries from the riverbed burns away, and the \
kiln master keeps the vents open so that the smoke and the gases can leave the chamber without staining.

The firing ends when the cones on the middle shelf bend, which at the west kiln happens at about nine \
hundred degrees, and the kiln then cools with its door shut for at least a full day and a night.

Glazes are mixed on the morning of the glaze firing.
"""


def test_no_window_of_several_sentences_is_longer_than_the_cap():
    units = [u for u in build_tree(KILN, SourceMeta("kiln", "kiln.md", "markdown")) if u.kuType == "atomic"]
    pool = split_units(units)
    found = windows(pool)
    assert found, "no window at all"
    several = [w for w in found if len(w) > 1]
    assert all(len(" ".join(s.text for s in w)) <= MAX_WINDOW_CHARS for w in several)
    # every sentence is still a window of its own, however long
    assert {s.text for s in pool} <= {w[0].text for w in found if len(w) == 1}
