"""gs-symbolic reports how far its chosen passage is ahead of the best passage of another unit ("margin" in
its evidence, 1 - rival score / chosen score), the figure bench/status_features.py reads beside coverage and
meaning when it checks whether a calibrated status would do better than the rules (docs/answers/FAILURES.md,
session 19). A question one entry answers alone is far ahead; one two entries answer alike is not."""

from __future__ import annotations

import re

from kb_corpus import tree
from test_answer_status import solve

_ENTRIES = {
    "retries": "Brine retries a failed upload three times before it gives up.",
    "chunks": "Uploads are split into chunks of four megabytes.",
    "downloads": "Brine retries a failed download three times before it gives up.",
    "mirrors": "Downloads are read from the nearest mirror.",
}
BRINE = tree("brine", [("Transfers", [("Description", topic, text) for topic, text in _ENTRIES.items()])])


def _margin(question: str) -> float:
    doc = solve(question, BRINE, "number")
    found = re.search(r"margin (\d\.\d+)", doc.result.evidence or "")
    assert found, doc.result.evidence
    return float(found.group(1))


def test_a_passage_only_one_entry_holds_is_far_ahead_of_the_others():
    assert _margin("What size are the chunks uploads are split into?") >= 0.3


def test_two_entries_answering_alike_leave_the_chosen_one_barely_ahead():
    assert _margin("How many times does Brine retry before it gives up?") < 0.1
