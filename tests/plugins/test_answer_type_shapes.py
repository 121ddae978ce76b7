"""The shallow recognisers of answer types (plugins/sdk/answer_shapes.py) on invented sentences: a one-letter
unit read inside an ordinary word ("as" = "a" + "s"), a number word glued to a unit ("tens", "eighth"), a
version or a list item's rank read as a figure, a measure read as a version or a year, the modal "may" read
as a month — and the true shapes kept."""

from __future__ import annotations

import pytest
from mrpvm.plugins.sdk.answer_shapes import DURATION, mentions_type

# (sentence, type, whether the sentence states something of that type); the False rows failed before
CASES = [
    # a duration: a figure or number word and a unit, or an article and a unit written out
    ("The lantern glows as long as the wick lasts.", "duration", False),
    ("Ah, the ferry timetable is on the pier.", "duration", False),
    ("Tens of gulls nest on the breakwater.", "duration", False),
    ("Only the ones painted blue are rented.", "duration", False),
    ("The eighth buoy marks the channel.", "duration", False),
    ("Hundreds of ropes hang in the loft.", "duration", False),
    ("Keep a second oar in the hull.", "duration", False),
    ("The harbour grew in the 1890s.", "duration", False),
    ("Soak the net for 30s.", "duration", True),
    ("The tide turns every 6h.", "duration", True),
    ("The horn sounds for 250ms.", "duration", True),
    ("Drying takes 1.5 hours.", "duration", True),
    ("Allow a 10-minute pause between casts.", "duration", True),
    ("The crossing takes ten minutes.", "duration", True),
    ("A five-day course teaches knots.", "duration", True),
    ("The kiln cools in an hour.", "duration", True),
    ("Wait a second before hauling.", "duration", True),
    ("Repaint the hull twice a year.", "duration", True),
    ("Give the varnish a few days.", "duration", True),
    # a number: not a dotted version nor a numbered item's rank
    ("Upgrade the buoy firmware to 4.2.7 first.", "number", False),
    ("1. Coil the rope.\n2. Hang it in the loft.", "number", False),
    ("1. Set the crew size to 6.", "number", True),
    ("Each skiff seats 3 rowers.", "number", True),
    ("Trim the sail to 0.5 of its width.", "number", True),
    ("Release 3.2 adds a tide chart.", "number", True),
    # a version: a decimal before a unit is a measure
    ("Drying the sail takes 1.5 hours.", "version", False),
    ("The chart cache holds 2.5GB of tiles.", "version", False),
    ("Keep 0.5% of the ballast aft.", "version", False),
    ("The tide chart was fixed in 3.2.", "version", True),
    ("Buoy firmware 2.4.1 or later is required.", "version", True),
    ("Since 1.5 the horn flag is gone.", "version", True),
    # a date: the modal "may" names no month; a four-digit figure before a unit is no year
    ("The horn repeats after 1800 seconds.", "date", False),
    ("A log page holds 2048 bytes.", "date", False),
    ("The lighthouse was built in 1896.", "date", True),
    ("ms.date: 04/15/2031\nms.topic: harbour", "date", True),
    # a date: the modal "may" names no month
    ("Step 4 may take the whole tide.", "date", False),
    ("Every skipper has a berth; each may moor one skiff.", "date", False),
    ("The regatta is held on 12 May.", "date", True),
    ("Entries close by May 3.", "date", True),
    ("The pier is shut until May.", "date", True),
    ("The regatta moved to June 14.", "date", True),
]


@pytest.mark.parametrize(("text", "answer_type", "expected"), CASES)
def test_a_sentence_states_its_type_only_in_the_type_s_shape(
    text: str, answer_type: str, expected: bool
) -> None:
    assert mentions_type(text, answer_type) is expected


def test_a_duration_span_is_the_figure_and_its_unit() -> None:
    found = [m.group(0) for m in DURATION.finditer("Soak it for 30s as the net dries, then an hour more.")]
    assert found == ["30s", "an hour"]
