"""gs-symbolic's per-text work done once: a negative table cell looked for only where its value is written
(narrowing._negations), a text's tokens kept (clauses.tokenize). Same results as before, by construction."""

from __future__ import annotations

import msgspec
import pytest
from mrpvm.plugins.gs_symbolic import clauses, narrowing
from mrpvm.plugins.sdk.text import terms

# invented texts: cells with a negative value, near misses, and prose
TEXTS = [
    "Needs network: No",
    "Needs network: No; Runs offline: yes.",
    "Cloud sync — none, local only",
    "GPU acceleration – n/a)",
    "Telemetry: NEVER.",
    "Heated bed: false",
    "Heated bed: falsely reported",  # no cell: the value must end there
    "The kettle does not boil without water.",
    "Descaling: required; Filter: no",
    "Nothing here names a cell: it only has a colon.",
    "Ratio 3:1, none of which matters",
    "The pump is never primed by hand",
    "",
]


def _reference(text: str) -> tuple[str, ...]:
    """_negations as it was: the table-cell pattern run over every text."""
    out: list[str] = []
    for m in narrowing._NEGATOR.finditer(text):
        for w in narrowing._WORD.findall(text[m.end() : m.end() + 60])[:4]:
            if w.lower() in narrowing._BRIDGE:
                continue
            out.extend(narrowing.NEGATED_PREFIX + t for t in terms(w))
            break
    for m in narrowing._NEGATIVE_CELL.finditer(text):
        out.extend(narrowing.NEGATED_PREFIX + t for t in terms(m.group(1)))
    return tuple(dict.fromkeys(out))


@pytest.mark.parametrize("text", TEXTS)
def test_negations_as_the_full_scan(text: str) -> None:
    narrowing._negations.cache_clear()
    assert narrowing._negations(text) == _reference(text)


def test_negative_cell_still_read() -> None:
    narrowing._negations.cache_clear()
    assert "no-network" in narrowing.negation_terms("Needs network: No")
    assert any(t.startswith("no-sync") for t in narrowing.negation_terms("Cloud sync — none"))
    assert not narrowing.negation_terms("Heated bed: falsely reported")


def test_tokens_fresh_list_shared_frozen_tokens() -> None:
    first = clauses.tokenize("The valve closes when the tank is full.")
    first.clear()  # a caller may edit its list: the next caller still gets every token
    again = clauses.tokenize("The valve closes when the tank is full.")
    assert [t.low for t in again][:3] == ["the", "valve", "closes"]
    with pytest.raises(AttributeError):
        again[1].low = "pipe"  # type: ignore[misc]
    assert again[0].initial and not again[1].initial


def test_tokens_follow_the_text() -> None:
    """A memo keyed by the text: an edited sentence is tokenized anew, not served its old tokens."""
    before = clauses.tokenize("The heater warms the tank.")
    after = clauses.tokenize("The heater cooled the tank.")
    assert [t.low for t in before] != [t.low for t in after]
    assert any("cool" in t.stems for t in after) and not any("cool" in t.stems for t in before)


def test_tokens_equal_uncached() -> None:
    text = "Isn't the pump's seal checked weekly — or re-seated?"
    clauses._tokens.cache_clear()
    fresh = clauses.tokenize(text)
    kept = clauses.tokenize(text)
    assert msgspec.json.encode(fresh) == msgspec.json.encode(kept)
    assert clauses._tokens.cache_info().hits >= 1
